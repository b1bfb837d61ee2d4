/*
 * Validates every record in tests/unit/data/export (NAME.in.json) as
 * exported against the real ECS and OCSF schemas, reduced by
 * tests/unit/data/schemas/reduce.py: names, types, enums, requirements.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "export.h"
#include "testutil.h"

#define DATA_DIR	"tests/unit/data/export"
#define ECS_FILE	"tests/unit/data/schemas/ecs-9.4.0-fields.json"
#define OCSF_FILE	"tests/unit/data/schemas/ocsf-1.8.0-classes.json"
#define OCSF_VERSION	"1.8.0"
#define HOSTNAME	"sandbox-01.example.net"
#define PATH_LEN	512
#define ERR_LEN		8192
#define MAX_CASES	64

/* The problems found, as many as fit. */
struct verr {
	char	 msg[ERR_LEN];
	size_t	 len;
	int	 n;
};

static void
fail_at(struct verr *e, const char *path, const char *what, const char *x)
{
	int	 n;

	e->n++;
	if (e->len >= sizeof(e->msg))
		return;
	n = snprintf(e->msg + e->len, sizeof(e->msg) - e->len, "\n  %s: %s%s%s",
	    path, what, x != NULL ? " " : "", x != NULL ? x : "");
	if (n > 0)
		e->len += (size_t)n;
}

static json_t *
load_file(const char *path)
{
	json_error_t	 err;
	json_t		*j;

	j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	ck_assert_msg(j != NULL, "%s:%d: %s", path, err.line, err.text);
	return j;
}

static int
str_in(const json_t *arr, const char *s)
{
	size_t		 i;
	const json_t	*v;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

static int
ip_ok(const char *s)
{
	unsigned char	 buf[16];

	return inet_pton(AF_INET, s, buf) == 1 ||
	    inet_pton(AF_INET6, s, buf) == 1;
}

/* ------------------------------------------------------------ ECS */

/* One value against an ECS type; the allowed values when it has them. */
static void
ecs_value(const json_t *f, const char *path, const json_t *v,
    struct verr *e)
{
	const char	*t = json_string_value(json_object_get(f, "type"));
	const json_t	*allowed = json_object_get(f, "allowed_values");

	if (strcmp(t, "keyword") == 0 || strcmp(t, "wildcard") == 0 ||
	    strcmp(t, "match_only_text") == 0 || strcmp(t, "text") == 0 ||
	    strcmp(t, "constant_keyword") == 0 || strcmp(t, "date") == 0) {
		if (!json_is_string(v))
			return fail_at(e, path, "not a string for type", t);
		if (allowed != NULL && !str_in(allowed, json_string_value(v)))
			fail_at(e, path, "value not allowed:",
			    json_string_value(v));
	} else if (strcmp(t, "ip") == 0) {
		if (!json_is_string(v) || !ip_ok(json_string_value(v)))
			fail_at(e, path, "not an IP address", NULL);
	} else if (strcmp(t, "long") == 0 || strcmp(t, "integer") == 0 ||
	    strcmp(t, "short") == 0 || strcmp(t, "byte") == 0 ||
	    strcmp(t, "unsigned_long") == 0) {
		if (!json_is_integer(v))
			fail_at(e, path, "not an integer for type", t);
	} else if (strcmp(t, "float") == 0 || strcmp(t, "double") == 0 ||
	    strcmp(t, "scaled_float") == 0 || strcmp(t, "half_float") == 0) {
		if (!json_is_number(v))
			fail_at(e, path, "not a number for type", t);
	} else if (strcmp(t, "boolean") == 0) {
		if (!json_is_boolean(v))
			fail_at(e, path, "not a boolean", NULL);
	} else if (strcmp(t, "object") != 0 && strcmp(t, "flattened") != 0 &&
	    strcmp(t, "nested") != 0)
		fail_at(e, path, "type not handled by this test:", t);
}

/* An ancestor of path of type object/flattened takes any key below it. */
static int
ecs_free_below(const json_t *fields, const char *path)
{
	char		 p[PATH_LEN];
	char		*dot;
	const char	*t;

	snprintf(p, sizeof(p), "%s", path);
	while ((dot = strrchr(p, '.')) != NULL) {
		*dot = '\0';
		t = json_string_value(json_object_get(json_object_get(fields,
		    p), "type"));
		if (t != NULL && (strcmp(t, "object") == 0 ||
		    strcmp(t, "flattened") == 0))
			return 1;
	}
	return 0;
}

static void
ecs_walk(const json_t *fields, const char *prefix, const json_t *obj,
    struct verr *e)
{
	const char	*k;
	const json_t	*v, *f, *x;
	char		 path[PATH_LEN];
	size_t		 i;

	json_object_foreach((json_t *)obj, k, v) {
		snprintf(path, sizeof(path), "%s%s%s", prefix,
		    *prefix ? "." : "", k);
		/* Our own namespace, as ECS asks of custom fields. */
		if (strcmp(path, "stockade") == 0)
			continue;
		f = json_object_get(fields, path);
		if (f == NULL && json_is_object(v)) {
			ecs_walk(fields, path, v, e);
			continue;
		}
		if (f == NULL) {
			if (!ecs_free_below(fields, path))
				fail_at(e, path, "is not an ECS field", NULL);
			continue;
		}
		if (json_is_array(v)) {
			if (!str_in(json_object_get(f, "normalize"), "array"))
				fail_at(e, path, "is not an array field", NULL);
			json_array_foreach(v, i, x)
				ecs_value(f, path, x, e);
		} else
			ecs_value(f, path, v, e);
	}
}

/* Each event.type must be one its every event.category expects. */
static void
ecs_category_types(const json_t *fields, const json_t *doc, struct verr *e)
{
	const json_t	*exp, *cats, *types, *c, *t;
	size_t		 i, j;

	exp = json_object_get(json_object_get(fields, "event.category"),
	    "expected_event_types");
	cats = json_object_get(json_object_get(doc, "event"), "category");
	types = json_object_get(json_object_get(doc, "event"), "type");
	json_array_foreach(cats, i, c)
		json_array_foreach(types, j, t)
			if (!str_in(json_object_get(exp, json_string_value(c)),
			    json_string_value(t)))
				fail_at(e, json_string_value(c),
				    "category does not expect type",
				    json_string_value(t));
}

static void
ecs_validate(const json_t *schema, const json_t *doc, struct verr *e)
{
	const json_t	*fields = json_object_get(schema, "fields");
	const char	*k;
	const json_t	*f;

	ecs_walk(fields, "", doc, e);
	ecs_category_types(fields, doc, e);
	/* Required fields are top-level or one object down in ECS. */
	json_object_foreach((json_t *)fields, k, f) {
		char		 top[PATH_LEN];
		char		*dot;
		const json_t	*v;

		if (!json_is_true(json_object_get(f, "required")))
			continue;
		snprintf(top, sizeof(top), "%s", k);
		if ((dot = strchr(top, '.')) != NULL) {
			*dot = '\0';
			v = json_object_get(json_object_get(doc, top), dot + 1);
		} else
			v = json_object_get(doc, k);
		if (v == NULL)
			fail_at(e, k, "required by ECS, missing", NULL);
	}
	if (!json_equal(json_object_get(json_object_get(doc, "ecs"),
	    "version"), json_object_get(schema, "version")))
		fail_at(e, "ecs.version", "is not", json_string_value(
		    json_object_get(schema, "version")));
}

/* ------------------------------------------------------------ OCSF */

static void ocsf_object(const json_t *, const json_t *, const json_t *,
    const json_t *, const char *, const json_t *, struct verr *);

static void
ocsf_value(const json_t *schema, const json_t *a, const char *path,
    const json_t *v, const json_t *profiles, struct verr *e)
{
	const char	*t = json_string_value(json_object_get(a, "type"));
	const char	*fmt;
	const json_t	*en = json_object_get(a, "enum"), *o, *rng, *x;
	json_int_t	 n;
	size_t		 i;
	int		 found;

	fmt = json_string_value(json_object_get(a, "format"));
	if (strncmp(t, "object:", 7) == 0) {
		if (!json_is_object(v))
			return fail_at(e, path, "not an object", NULL);
		if (strcmp(t + 7, "object") == 0)
			return;		/* free form: unmapped */
		o = json_object_get(json_object_get(schema, "objects"), t + 7);
		if (o == NULL)
			return fail_at(e, path, "object not reduced:", t + 7);
		ocsf_object(schema, json_object_get(o, "attributes"),
		    json_object_get(o, "constraints"), profiles, path, v, e);
	} else if (strcmp(t, "string") == 0) {
		if (!json_is_string(v))
			return fail_at(e, path, "not a string", NULL);
		if (fmt != NULL && strcmp(fmt, "ip_t") == 0 &&
		    !ip_ok(json_string_value(v)))
			fail_at(e, path, "not an IP address", NULL);
		if (en != NULL && !str_in(en, json_string_value(v)))
			fail_at(e, path, "not in the enum:",
			    json_string_value(v));
	} else if (strcmp(t, "integer") == 0) {
		if (!json_is_integer(v))
			return fail_at(e, path, "not an integer", NULL);
		n = json_integer_value(v);
		if ((rng = json_object_get(a, "range")) != NULL &&
		    (n < json_integer_value(json_array_get(rng, 0)) ||
		    n > json_integer_value(json_array_get(rng, 1))))
			fail_at(e, path, "out of range", NULL);
		if (en != NULL) {
			found = 0;
			json_array_foreach(en, i, x)
				found |= json_integer_value(x) == n;
			if (!found)
				fail_at(e, path, "not in the enum", NULL);
		}
	} else if (strcmp(t, "number") == 0) {
		if (!json_is_number(v))
			fail_at(e, path, "not a number", NULL);
	} else if (strcmp(t, "boolean") == 0) {
		if (!json_is_boolean(v))
			fail_at(e, path, "not a boolean", NULL);
	} else if (strcmp(t, "any") != 0)
		fail_at(e, path, "type not handled by this test:", t);
}

static int
profile_on(const json_t *a, const json_t *profiles)
{
	const char	*p = json_string_value(json_object_get(a, "profile"));

	return p == NULL || str_in(profiles, p);
}

static void
ocsf_constraints(const json_t *c, const char *path, const json_t *v,
    struct verr *e)
{
	const json_t	*x;
	size_t		 i, n = 0;

	json_array_foreach(json_object_get(c, "at_least_one"), i, x)
		n += json_object_get(v, json_string_value(x)) != NULL;
	if (json_object_get(c, "at_least_one") != NULL && n == 0)
		fail_at(e, path, "has none of its at_least_one", NULL);
	n = 0;
	json_array_foreach(json_object_get(c, "just_one"), i, x)
		n += json_object_get(v, json_string_value(x)) != NULL;
	if (json_object_get(c, "just_one") != NULL && n != 1)
		fail_at(e, path, "has not just_one of its choices", NULL);
}

static void
ocsf_object(const json_t *schema, const json_t *attrs, const json_t *cons,
    const json_t *profiles, const char *prefix, const json_t *v,
    struct verr *e)
{
	const char	*k;
	const json_t	*a, *x, *el;
	char		 path[PATH_LEN];
	size_t		 i;

	json_object_foreach((json_t *)v, k, x) {
		snprintf(path, sizeof(path), "%s%s%s", prefix,
		    *prefix ? "." : "", k);
		if ((a = json_object_get(attrs, k)) == NULL) {
			fail_at(e, path, "is not an attribute here", NULL);
			continue;
		}
		if (json_is_true(json_object_get(a, "array"))) {
			if (!json_is_array(x)) {
				fail_at(e, path, "not an array", NULL);
				continue;
			}
			json_array_foreach(x, i, el)
				ocsf_value(schema, a, path, el, profiles, e);
		} else
			ocsf_value(schema, a, path, x, profiles, e);
	}
	json_object_foreach((json_t *)attrs, k, a) {
		snprintf(path, sizeof(path), "%s%s%s", prefix,
		    *prefix ? "." : "", k);
		x = json_object_get(a, "requirement");
		if (strcmp(json_string_value(x), "required") == 0 &&
		    profile_on(a, profiles) && json_object_get(v, k) == NULL)
			fail_at(e, path, "required, missing", NULL);
	}
	ocsf_constraints(cons, *prefix ? prefix : "event", v, e);
}

static void
ocsf_validate(const json_t *schema, const json_t *doc, const char *want,
    struct verr *e)
{
	const json_t	*cls, *md = json_object_get(doc, "metadata");
	json_int_t	 uid, act;
	char		 key[32];

	uid = json_integer_value(json_object_get(doc, "class_uid"));
	act = json_integer_value(json_object_get(doc, "activity_id"));
	snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, uid);
	if ((cls = json_object_get(json_object_get(schema, "classes"),
	    key)) == NULL)
		return fail_at(e, "class_uid", "not a reduced class:", key);
	if (want == NULL)
		fail_at(e, "class_uid", "no class expected for this case:",
		    "add it to classes[]");
	else if (strcmp(json_string_value(json_object_get(cls, "name")),
	    want) != 0)
		fail_at(e, "class_uid", "is not the class", want);
	if (!json_equal(json_object_get(doc, "category_uid"),
	    json_object_get(cls, "category_uid")))
		fail_at(e, "category_uid", "not the class's category", NULL);
	if (json_integer_value(json_object_get(doc, "type_uid")) !=
	    uid * 100 + act)
		fail_at(e, "type_uid", "is not class_uid * 100 + activity_id",
		    NULL);
	if (!json_equal(json_object_get(md, "version"),
	    json_object_get(schema, "version")))
		fail_at(e, "metadata.version", "is not", OCSF_VERSION);
	ocsf_object(schema, json_object_get(cls, "attributes"),
	    json_object_get(cls, "constraints"),
	    json_object_get(md, "profiles"), "", doc, e);
}

/* ------------------------------------------------------------ cases */

/* The class each event's export must land in (OCSF caption). */
static const struct {
	const char	*prefix;
	const char	*ocsf_class;
} classes[] = {
	{ "code_execution", "Process Activity" },
	{ "execution_started", "Process Activity" },
	{ "execution_lost", "Process Activity" },
	{ "egress_http", "HTTP Activity" },
	{ "egress_", "Network Activity" },
	{ "dns_query", "DNS Activity" },
	{ "dns_tunnel_suspected", "Detection Finding" },
	{ "call_refused_token", "Authentication" },
	{ "writer_refused", "Authentication" },
	{ "call_refused", "API Activity" },
	{ "session_", "API Activity" },
	{ "artifact_", "File System Activity" },
	{ "policy_load", "Device Config State Change" },
	{ "daemon_", "Application Lifecycle" },
	/* The daemon's own bookkeeping has no OCSF class of its own. */
	{ "audit_", "Base Event" },
	{ "chain_start", "Base Event" },
	{ "checkpoint", "Base Event" },
	{ "cleanup", "Base Event" },
	{ "event_rejected", "Base Event" },
	{ "fleet_", "Base Event" },
	{ "operator_note", "Base Event" },
	{ "recovery", "Base Event" },
	{ "rotate", "Base Event" },
	{ "unknown_event", "Base Event" },
};

static const char *
want_class(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (strncmp(name, classes[i].prefix,
		    strlen(classes[i].prefix)) == 0)
			return classes[i].ocsf_class;
	return NULL;
}

static char	 names[MAX_CASES][PATH_LEN];
static int	 ncases;

static void
find_cases(void)
{
	DIR		*d;
	struct dirent	*de;
	size_t		 len;

	ck_assert_ptr_nonnull(d = opendir(DATA_DIR));
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 9 || strcmp(de->d_name + len - 8, ".in.json") != 0)
			continue;
		ck_assert_int_lt(ncases, MAX_CASES);
		snprintf(names[ncases++], PATH_LEN, "%.*s", (int)(len - 8),
		    de->d_name);
	}
	closedir(d);
	ck_assert_int_gt(ncases, 0);
}

/* One case's problems, under its name, into the whole run's. */
static void
report_add(struct verr *all, const char *name, const struct verr *e)
{
	int	 n;

	if (e->n == 0)
		return;
	all->n += e->n;
	if (all->len >= sizeof(all->msg))
		return;
	n = snprintf(all->msg + all->len, sizeof(all->msg) - all->len,
	    "\n%s:%s", name, e->msg);
	if (n > 0)
		all->len += (size_t)n;
}

static json_t *
export_case(int i, enum export_format f)
{
	char	 path[PATH_LEN];
	json_t	*in, *out;

	snprintf(path, sizeof(path), "%s/%s.in.json", DATA_DIR, names[i]);
	in = load_file(path);
	out = export_record(f, in, HOSTNAME);
	ck_assert_msg(out != NULL, "%s: not mapped", names[i]);
	json_decref(in);
	return out;
}

START_TEST(test_every_case_is_valid_ecs)
{
	json_t		*schema = load_file(ECS_FILE), *doc;
	struct verr	 e, all;
	int		 i;

	memset(&all, 0, sizeof(all));
	find_cases();
	for (i = 0; i < ncases; i++) {
		memset(&e, 0, sizeof(e));
		doc = export_case(i, EXPORT_ECS);
		ecs_validate(schema, doc, &e);
		report_add(&all, names[i], &e);
		json_decref(doc);
	}
	ck_assert_msg(all.n == 0, "%d problems:%s", all.n, all.msg);
	json_decref(schema);
}
END_TEST

START_TEST(test_every_case_is_valid_ocsf)
{
	json_t		*schema = load_file(OCSF_FILE), *doc;
	struct verr	 e, all;
	int		 i;

	memset(&all, 0, sizeof(all));
	find_cases();
	for (i = 0; i < ncases; i++) {
		memset(&e, 0, sizeof(e));
		doc = export_case(i, EXPORT_OCSF);
		ocsf_validate(schema, doc, want_class(names[i]), &e);
		report_add(&all, names[i], &e);
		json_decref(doc);
	}
	ck_assert_msg(all.n == 0, "%d problems:%s", all.n, all.msg);
	json_decref(schema);
}
END_TEST

/* netguard's src_ip and the HTTP client's address, in standard fields. */
START_TEST(test_source_address_in_standard_fields)
{
	static const struct {
		const char	*name;
		const char	*ip;
	} want[] = {
		{ "egress_denied", "10.77.0.2" },
		{ "call_refused_token", "198.51.100.23" },
	};
	char		 path[PATH_LEN];
	json_t		*in, *ecs, *ocsf;
	size_t		 i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.in.json", DATA_DIR,
		    want[i].name);
		in = load_file(path);
		ecs = export_record(EXPORT_ECS, in, HOSTNAME);
		ocsf = export_record(EXPORT_OCSF, in, HOSTNAME);
		ck_assert_ptr_nonnull(ecs);
		ck_assert_ptr_nonnull(ocsf);
		ck_assert_pstr_eq(json_string_value(json_object_get(
		    json_object_get(ecs, "source"), "ip")), want[i].ip);
		ck_assert_pstr_eq(json_string_value(json_object_get(
		    json_object_get(ocsf, "src_endpoint"), "ip")), want[i].ip);
		json_decref(ocsf);
		json_decref(ecs);
		json_decref(in);
	}
}
END_TEST

/* The validator itself must see a broken document. */
START_TEST(test_validator_catches_breakage)
{
	json_t		*ecs = load_file(ECS_FILE);
	json_t		*ocsf = load_file(OCSF_FILE);
	json_t		*doc;
	struct verr	 e;

	memset(&e, 0, sizeof(e));
	doc = json_pack("{s:s, s:{s:s}, s:{s:[s], s:[s]}, s:{s:s}}",
	    "@timestamp", "2026-11-30T02:44:26.123Z", "ecs", "version",
	    "9.4.0", "event", "category", "process", "type", "denied",
	    "source", "address_ip", "192.0.2.1");
	ecs_validate(ecs, doc, &e);
	/* source.address_ip; process+denied */
	ck_assert_msg(e.n == 2, "%d: %s", e.n, e.msg);
	json_decref(doc);
	memset(&e, 0, sizeof(e));
	doc = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:{s:s, s:{s:s}}}",
	    "time", 1, "class_uid", 4001, "category_uid", 4, "activity_id", 42,
	    "type_uid", 400105, "severity_id", 1, "metadata", "version",
	    "1.8.0", "product", "name", "x");
	ocsf_validate(ocsf, doc, "Network Activity", &e);
	/* activity_id enum, type_uid sum, no endpoint. */
	ck_assert_msg(e.n == 3, "%d: %s", e.n, e.msg);
	json_decref(doc);
	json_decref(ecs);
	json_decref(ocsf);
}
END_TEST

static Suite *
export_schema_suite(void)
{
	Suite	*s = suite_create("export_schema");
	TCase	*tc = tcase_create("schemas");

	tcase_add_test(tc, test_every_case_is_valid_ecs);
	tcase_add_test(tc, test_every_case_is_valid_ocsf);
	tcase_add_test(tc, test_source_address_in_standard_fields);
	tcase_add_test(tc, test_validator_catches_breakage);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(export_schema_suite)
