/*
 * `stockade audit ...`: key generation, verification, sending, tailing
 * and exporting the audit trail.  Log files are read as untrusted input
 * (they may have been tampered with; that is what verify is for).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_client.h"
#include "blobstore.h"
#include "bundle.h"
#include "config.h"
#include "cli.h"
#include "export.h"
#include "hash.h"
#include "logdir.h"
#include "util.h"
#include "verify.h"

#define DEFAULT_SOCKET		"/run/stockade/auditd.sock"
#define DEFAULT_LOG_DIR		"/var/log/stockade/audit"
#define SEND_LINE_MAX		(4 * 1024 * 1024)
#define SEND_WINDOW_MAX		4096
#define TAIL_DEFAULT		20
#define TAIL_MAX		1000000
#define FOLLOW_POLL_US		250000
#define LOG_READ_MAX		(1ULL << 40)

static int
audit_usage(void)
{
	fprintf(stderr, "usage: stockade audit keygen|verify|send|tail|export|"
	    "status|show-code|evidence|report ... (see stockade(1))\n");
	return EXIT_USAGE;
}

/* ------------------------------------------------------------ keygen */

static int
audit_keygen(int argc, char *argv[])
{
	char	 priv[PATH_MAX], pub[PATH_MAX], err[512];

	if (argc != 2)
		return audit_usage();
	if (mkdir_p(argv[1], 0700) == -1) {
		fprintf(stderr, "stockade: %s: %s\n", argv[1], strerror(errno));
		return EXIT_USAGE;
	}
	if (xsnprintf(priv, sizeof(priv), "%s/checkpoint.key", argv[1]) == -1 ||
	    xsnprintf(pub, sizeof(pub), "%s/checkpoint.pub", argv[1]) == -1) {
		fprintf(stderr, "stockade: %s: path too long\n", argv[1]);
		return EXIT_USAGE;
	}
	if (ed25519_keygen(priv, pub, err, sizeof(err)) == -1) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	printf("wrote %s (private, mode 0600) and %s\n", priv, pub);
	printf("keep a copy of %s off this host: it is what proves the log "
	    "authentic\n", pub);
	return 0;
}

/* ------------------------------------------------------------ verify */

/*
 * --bundle PATH: a bundle folder, or a tar unpacked into a scratch folder.
 * keys: a fleet bundle's nodes' (one each, or one for all); a node's
 * bundle is checked with the first.
 */
int
audit_verify_bundle(const char *path, EVP_PKEY *const *keys, size_t nkeys)
{
	char		 msg[PATH_MAX + 512], warn[512], tmp[PATH_MAX];
	const char	*dir = path, *td;
	struct stat	 st;
	int		 rv;

	if (stat(path, &st) == -1) {
		fprintf(stderr, "stockade: %s: %s\n", path, strerror(errno));
		return EXIT_USAGE;
	}
	tmp[0] = '\0';
	if (!S_ISDIR(st.st_mode)) {
		td = getenv("TMPDIR");
		if (xsnprintf(tmp, sizeof(tmp), "%s/stockade-bundle.XXXXXX",
		    td && *td ? td : "/tmp") == -1 || mkdtemp(tmp) == NULL) {
			fprintf(stderr, "stockade: scratch folder: %s\n",
			    strerror(errno));
			return EXIT_USAGE;
		}
		if (bundle_tar_extract(path, tmp, msg, sizeof(msg)) == -1) {
			printf("%s: %s\n", path, msg);
			(void)rmtree(tmp);
			return EXIT_NEGATIVE;
		}
		dir = tmp;
	}
	rv = bundle_is_fleet(dir) ? bundle_verify_fleet(dir, keys, nkeys, msg,
	    sizeof(msg), warn, sizeof(warn)) : bundle_verify(dir, nkeys > 0 ?
	    keys[0] : NULL, msg, sizeof(msg), warn, sizeof(warn));
	if (tmp[0] != '\0')
		(void)rmtree(tmp);
	if (warn[0] != '\0')
		fprintf(stderr, "warning: %s\n", warn);
	printf("%s%s%s\n", rv == 0 ? "" : path, rv == 0 ? "" : ": ", msg);
	return rv == 0 ? 0 : rv == 1 ? EXIT_NEGATIVE : EXIT_USAGE;
}

static int
audit_verify(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "pubkey", required_argument, NULL, 'p' },
		{ "checkpoints", required_argument, NULL, 'c' },
		{ "bundle", no_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 }
	};
	struct verify_opts	 o;
	struct verify_report	 r;
	enum verify_result	 rv;
	const char		*pubpath = NULL;
	char			 err[512];
	int			 ch, bundle = 0;

	for (ch = 1; ch < argc && strcmp(argv[ch], "--") != 0; ch++)
		if (strcmp(argv[ch], "--fleet") == 0)
			return audit_verify_fleet(argc, argv);
	memset(&o, 0, sizeof(o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			pubpath = optarg;
			break;
		case 'c':
			o.checkpoints = optarg;
			break;
		case 'b':
			bundle = 1;
			break;
		default:
			return audit_usage();
		}
	}
	if (optind != argc - 1 || (bundle && o.checkpoints != NULL))
		return audit_usage();
	if (pubpath != NULL &&
	    (o.pubkey = ed25519_load_public(pubpath, err, sizeof(err))) == NULL) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	if (bundle) {
		ch = audit_verify_bundle(argv[optind], &o.pubkey,
		    o.pubkey != NULL);
		EVP_PKEY_free(o.pubkey);
		return ch;
	}
	rv = verify_dir(argv[optind], &o, &r);
	EVP_PKEY_free(o.pubkey);
	if (r.warning[0] != '\0')
		fprintf(stderr, "warning: %s\n", r.warning);
	switch (rv) {
	case VERIFY_TAMPERED:
		printf("%s: %s\n", r.where, r.reason);
		return EXIT_NEGATIVE;
	case VERIFY_ERROR:
		fprintf(stderr, "stockade: %s\n", r.reason);
		return EXIT_USAGE;
	case VERIFY_OK:
		break;
	}
	printf("audit log intact: %llu records (seq %llu..%llu) in %llu "
	    "file(s), chain %s\nhead %s\n", (unsigned long long)r.records,
	    (unsigned long long)r.first_seq, (unsigned long long)r.last_seq,
	    (unsigned long long)r.files, r.chain_id, r.head);
	if (pubpath != NULL)
		printf("checkpoints: %llu signed by the given key; %llu record(s) "
		    "after the last one\n",
		    (unsigned long long)r.checkpoints_verified,
		    (unsigned long long)r.unsigned_tail);
	else
		printf("checkpoints: %llu, signatures not checked (no "
		    "--pubkey)\n", (unsigned long long)r.checkpoints);
	if (o.checkpoints != NULL)
		printf("off-host checkpoints: %llu matched, %llu older than the "
		    "log\n", (unsigned long long)r.offhost_checked,
		    (unsigned long long)r.offhost_skipped);
	else
		printf("tail truncation not checked (no --checkpoints)\n");
	printf("code blobs: %llu present and intact\n",
	    (unsigned long long)r.blobs);
	return 0;
}

/* ------------------------------------------------------------ send */

static int
print_reply(const struct audit_ack *a, unsigned long line)
{
	if (a->ok) {
		printf("%llu %s%s\n", (unsigned long long)a->seq, a->hash,
		    a->durable ? "" : " (queued)");
		return 0;
	}
	fprintf(stderr, "stockade: line %lu: %s: %s\n", line, a->code,
	    a->message);
	return -1;
}

static int
audit_send(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "async", no_argument, NULL, 'a' },
		{ "window", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 }
	};
	struct audit_client	 ac;
	struct audit_ack	 a;
	const char		*sock = DEFAULT_SOCKET;
	char			*line = NULL, err[512];
	size_t			 cap = 0;
	ssize_t			 n;
	uint64_t		 window = 64, id, inflight = 0, first_id = 0;
	unsigned long		 lineno = 0;
	json_t			*ev;
	json_error_t		 je;
	int			 ch, sync = 1, failed = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		case 'a':
			sync = 0;
			break;
		case 'w':
			if (parse_u64(optarg, 1, SEND_WINDOW_MAX, &window) == -1)
				return audit_usage();
			break;
		default:
			return audit_usage();
		}
	}
	if (optind != argc)
		return audit_usage();
	if (audit_client_open(&ac, sock, err, sizeof(err)) == -1) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	/* Replies carry ids; line numbers follow from id - first_id. */
	while ((n = getline(&line, &cap, stdin)) != -1) {
		lineno++;
		if (n > SEND_LINE_MAX) {
			fprintf(stderr, "stockade: line %lu: longer than %d "
			    "bytes\n", lineno, SEND_LINE_MAX);
			failed = 1;
			continue;
		}
		if ((ev = json_loadb(line, (size_t)n, 0, &je)) == NULL) {
			fprintf(stderr, "stockade: line %lu: %s\n", lineno,
			    je.text);
			failed = 1;
			continue;
		}
		if (audit_client_send(&ac, ev, sync, &id) == -1) {
			json_decref(ev);
			fprintf(stderr, "stockade: send: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		json_decref(ev);
		if (first_id == 0)
			first_id = id - lineno + 1;
		if (++inflight < window)
			continue;
		if (audit_client_recv(&ac, &a, err, sizeof(err)) == -1) {
			fprintf(stderr, "stockade: %s\n", err);
			failed = 1;
			break;
		}
		inflight--;
		failed |= print_reply(&a, (unsigned long)(a.id - first_id + 1));
	}
	while (inflight > 0) {
		if (audit_client_recv(&ac, &a, err, sizeof(err)) == -1) {
			fprintf(stderr, "stockade: %s\n", err);
			failed = 1;
			break;
		}
		inflight--;
		failed |= print_reply(&a, (unsigned long)(a.id - first_id + 1));
	}
	free(line);
	audit_client_close(&ac);
	return failed ? EXIT_NEGATIVE : 0;
}

/* ------------------------------------------------------------ status */

static int
print_status(const char *sock)
{
	struct audit_client	 ac;
	json_t			*st;
	char			 err[512];

	if (audit_client_open(&ac, sock, err, sizeof(err)) == -1) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	st = audit_client_status(&ac, err, sizeof(err));
	audit_client_close(&ac);
	if (st == NULL) {
		fprintf(stderr, "stockade: %s\n", err);
		return EXIT_USAGE;
	}
	json_dumpf(st, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(st);
	return 0;
}

/* Parses a lone --NAME PATH option (default def); -1 on anything else. */
static int
socket_opt(int argc, char *argv[], const char *name, const char **sock)
{
	const struct option longopts[] = {
		{ name, required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch != 's')
			return -1;
		*sock = optarg;
	}
	return optind == argc ? 0 : -1;
}

static int
audit_status(int argc, char *argv[])
{
	const char	*sock = DEFAULT_SOCKET;

	if (socket_opt(argc, argv, "socket", &sock) == -1)
		return audit_usage();
	return print_status(sock);
}

/* ------------------------------------------------------------ tail, export */

struct filter {
	const char	*session;
	const char	*event;
	uint64_t	 since;
};

/* Parses a record line and applies the filter; NULL when it does not pass. */
static json_t *
filter_line(const struct filter *f, const char *line, size_t len)
{
	json_t		*j;
	const char	*s;

	if ((j = json_loadb(line, len, 0, NULL)) == NULL || !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	if (f->since != 0 &&
	    json_integer_value(json_object_get(j, "seq")) < (json_int_t)f->since)
		goto drop;
	if (f->event != NULL && ((s = json_string_value(json_object_get(j,
	    "event"))) == NULL || strcmp(s, f->event) != 0))
		goto drop;
	if (f->session != NULL && ((s = json_string_value(json_object_get(j,
	    "session_id"))) == NULL || strcmp(s, f->session) != 0))
		goto drop;
	return j;
drop:
	json_decref(j);
	return NULL;
}

static char	*read_log(const char *, const char *, size_t *);

typedef void line_cb(void *arg, const char *line, size_t len, json_t *rec);

/* Calls cb on each complete, matching line of data. Returns bytes consumed. */
static size_t
each_line(const struct filter *f, const char *data, size_t len, line_cb *cb,
    void *arg)
{
	const char	*nl;
	size_t		 off = 0;
	json_t		*j;

	while (off < len && (nl = memchr(data + off, '\n', len - off)) != NULL) {
		if ((j = filter_line(f, data + off, (size_t)(nl - data - off))) !=
		    NULL) {
			cb(arg, data + off, (size_t)(nl - data - off), j);
			json_decref(j);
		}
		off = (size_t)(nl - data) + 1;
	}
	return off;
}

/* Reads each log file in order; returns -1 when the directory is unreadable. */
static int
each_file(const char *dir, const struct filter *f, line_cb *cb, void *arg)
{
	struct logfile	*files;
	char		*data;
	size_t		 n, i, len;

	if (logdir_list(dir, &files, &n) == -1) {
		fprintf(stderr, "stockade: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if ((data = read_log(dir, files[i].name, &len)) == NULL) {
			fprintf(stderr, "stockade: %s/%s: %s\n", dir,
			    files[i].name, strerror(errno));
			continue;
		}
		each_line(f, data, len, cb, arg);
		free(data);
	}
	free(files);
	return 0;
}

/* The last `keep` matching lines, in a ring. */
struct ring {
	char		**lines;
	size_t		  keep, count;
};

static void
ring_cb(void *arg, const char *line, size_t len, json_t *rec)
{
	struct ring	*r = arg;
	size_t		 slot = r->count++ % r->keep;

	free(r->lines[slot]);
	r->lines[slot] = xmalloc(len + 1);
	memcpy(r->lines[slot], line, len);
	r->lines[slot][len] = '\0';
}

static void
print_cb(void *arg, const char *line, size_t len, json_t *rec)
{
	fwrite(line, 1, len, stdout);
	putchar('\n');
}

/* Bytes up to and including the last newline. */
static size_t
complete_len(const char *data, size_t len)
{
	const char	*p = memrchr(data, '\n', len);

	return p ? (size_t)(p - data) + 1 : 0;
}

/* Reads a log file; NULL when it cannot be read. */
static char *
read_log(const char *dir, const char *name, size_t *len)
{
	char	 path[PATH_MAX], *data;

	if (xsnprintf(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    read_file(path, LOG_READ_MAX, &data, len) == -1)
		return NULL;
	/* The active file's zeros ahead of its records are not lines. */
	*len = logfile_records_len(data, *len);
	return data;
}

/*
 * Prints records as they are appended, following rotation: each poll
 * reads the file last seen from where it stopped, then any newer files.
 */
static void
follow(const char *dir, const struct filter *f)
{
	struct logfile	*files = NULL;
	char		 name[LOGFILE_NAME_MAX] = "", *data;
	size_t		 n = 0, i, len, done = 0;

	/* Start where tail stopped: the end of the newest file. */
	if (logdir_list(dir, &files, &n) == 0 && n > 0) {
		snprintf(name, sizeof(name), "%s", files[n - 1].name);
		if ((data = read_log(dir, name, &len)) != NULL) {
			done = complete_len(data, len);
			free(data);
		}
	}
	free(files);
	for (;;) {
		fflush(stdout);
		usleep(FOLLOW_POLL_US);
		if (logdir_list(dir, &files, &n) == -1)
			continue;
		for (i = 0; i < n && strcmp(files[i].name, name) != 0; i++)
			;
		if (i == n && n > 0) {		/* ours is gone: the newest */
			i = n - 1;
			done = 0;
		}
		for (; i < n; i++) {
			if (strcmp(files[i].name, name) != 0) {
				snprintf(name, sizeof(name), "%s", files[i].name);
				done = 0;
			}
			if ((data = read_log(dir, name, &len)) == NULL)
				break;
			if (len > done)
				done += each_line(f, data + done, len - done,
				    print_cb, NULL);
			free(data);
		}
		free(files);
	}
}

static int
parse_filter_opt(int ch, struct filter *f)
{
	switch (ch) {
	case 's':
		f->session = optarg;
		return 0;
	case 'e':
		f->event = optarg;
		return 0;
	case 'S':
		return parse_u64(optarg, 1, UINT64_MAX, &f->since);
	}
	return -1;
}

static int
audit_tail(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "since", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct filter	 f;
	struct ring	 r;
	const char	*dir = DEFAULT_LOG_DIR;
	uint64_t	 keep = TAIL_DEFAULT;
	size_t		 i;
	int		 ch, follow_mode = 0, rv;

	memset(&f, 0, sizeof(f));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "fn:", longopts, NULL)) != -1) {
		if (ch == 'f')
			follow_mode = 1;
		else if (ch == 'n') {
			if (parse_u64(optarg, 0, TAIL_MAX, &keep) == -1)
				return audit_usage();
		} else if (parse_filter_opt(ch, &f) == -1)
			return audit_usage();
	}
	if (optind < argc)
		dir = argv[optind++];
	if (optind != argc)
		return audit_usage();
	memset(&r, 0, sizeof(r));
	r.keep = keep ? keep : 1;
	r.lines = xcalloc(r.keep, sizeof(*r.lines));
	rv = each_file(dir, &f, ring_cb, &r);
	if (rv == 0 && keep > 0)
		for (i = r.count > r.keep ? r.count - r.keep : 0; i < r.count; i++)
			printf("%s\n", r.lines[i % r.keep]);
	for (i = 0; i < r.keep; i++)
		free(r.lines[i]);
	free(r.lines);
	if (rv == -1)
		return EXIT_USAGE;
	if (follow_mode)
		follow(dir, &f);
	return 0;
}

struct export_ctx {
	enum export_format	 fmt;
	char			 host[256];
	unsigned long		 skipped;
};

static void
export_cb(void *arg, const char *line, size_t len, json_t *rec)
{
	struct export_ctx	*x = arg;
	json_t			*out;

	if ((out = export_record(x->fmt, rec, x->host)) == NULL) {
		x->skipped++;
		return;
	}
	json_dumpf(out, stdout, EXPORT_DUMP_FLAGS);
	putchar('\n');
	json_decref(out);
}

static int
audit_export(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'F' },
		{ "session", required_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "since", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct export_ctx	 x;
	struct filter		 f;
	const char		*dir = DEFAULT_LOG_DIR, *fmt = NULL;
	int			 ch;

	memset(&f, 0, sizeof(f));
	memset(&x, 0, sizeof(x));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (ch == 'F')
			fmt = optarg;
		else if (parse_filter_opt(ch, &f) == -1)
			return audit_usage();
	}
	if (optind < argc)
		dir = argv[optind++];
	if (optind != argc || fmt == NULL ||
	    export_format_parse(fmt, &x.fmt) == -1)
		return audit_usage();
	if (gethostname(x.host, sizeof(x.host) - 1) == -1)
		snprintf(x.host, sizeof(x.host), "localhost");
	if (each_file(dir, &f, export_cb, &x) == -1)
		return EXIT_USAGE;
	if (x.skipped > 0)
		fprintf(stderr, "stockade: %lu record(s) could not be mapped\n",
		    x.skipped);
	return 0;
}

/* ------------------------------------------------------------ show-code */

/*
 * show-code [DIR] HASH: the code a run's records name, from the blob store
 * (code.retention full).  DIR defaults to the installed config's log_dir.
 * A copy is printed only if its bytes still hash to the name asked for.
 */
static int
audit_show_code(int argc, char *argv[])
{
	struct audit_conf	 c;
	const char		*dir, *hash;
	char			*code;
	size_t			 len;
	int			 rv;

	if (argc == 3) {
		dir = argv[1];
		hash = argv[2];
	} else if (argc == 2) {
		if (audit_conf_load(AUDIT_DEFAULT_CONFIG, &c) == -1) {
			fprintf(stderr, "stockade: name the log directory: "
			    "show-code DIR HASH\n");
			return EXIT_USAGE;
		}
		dir = c.log_dir;
		hash = argv[1];
	} else
		return audit_usage();
	if (strncmp(hash, "sha256:", 7) == 0)
		hash += 7;
	if (!blobstore_hex_ok(hash)) {
		fprintf(stderr, "stockade: HASH: sha256:<64 lowercase hex>\n");
		return EXIT_USAGE;
	}
	if (blobstore_read(dir, hash, &code, &len) == -1) {
		fprintf(stderr, "stockade: no intact copy of sha256:%s in %s/%s "
		    "(kept only with code.retention: full, and only while a "
		    "log file naming it is kept)\n", hash, dir, BLOBSTORE_DIR);
		return EXIT_NEGATIVE;
	}
	rv = fwrite(code, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 :
	    EXIT_NEGATIVE;
	free(code);
	return rv;
}

int
cmd_audit(int argc, char *argv[])
{
	static const struct {
		const char	*name;
		int		(*fn)(int, char *[]);
	} cmds[] = {
		{ "keygen", audit_keygen }, { "verify", audit_verify },
		{ "send", audit_send }, { "status", audit_status },
		{ "tail", audit_tail }, { "export", audit_export },
		{ "show-code", audit_show_code }, { "evidence", audit_evidence },
		{ "report", audit_report },
	};
	size_t	 i;

	for (i = 0; argc >= 2 && i < nitems(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	return audit_usage();
}
