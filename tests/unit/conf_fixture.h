/*
 * Helpers shared by the check_conf*.c tests: a YAML string loaded as
 * "t.yaml" with the error left in err, and a long flow sequence.
 */
#ifndef STOCKADE_CONF_FIXTURE_H
#define STOCKADE_CONF_FIXTURE_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

static char	 err[CONF_ERROR_LEN];

static inline struct conf_doc *
load(const char *yaml)
{
	return conf_doc_load_buf("t.yaml", yaml, strlen(yaml), err,
	    sizeof(err));
}

/* Loads yaml, which must succeed; the caller frees. */
static inline struct conf_doc *
load_ok(const char *yaml)
{
	struct conf_doc	*doc = load(yaml);

	ck_assert_msg(doc != NULL, "load of \"%s\" failed: %s", yaml, err);
	return doc;
}

/* "[0,0,...,0]" with n members; the caller frees. */
static inline char *
flow_list(size_t n)
{
	char	*yaml = malloc(2 * n + 3), *p = yaml;
	size_t	 i;

	ck_assert_ptr_nonnull(yaml);
	*p++ = '[';
	for (i = 0; i < n; i++) {
		*p++ = '0';
		*p++ = ',';
	}
	p[-1] = ']';
	*p = '\0';
	return yaml;
}

#endif /* STOCKADE_CONF_FIXTURE_H */
