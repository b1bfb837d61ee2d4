/*
 * list_files and read_file: any file a session's code left in /workspace,
 * for the principal that owns the session (anyone else, or an unknown id,
 * is told "session not found").  The reading itself, beneath the
 * workspace descriptor, is sessions/session_files.c's; here are the
 * arguments and the answer: text when the bytes are UTF-8 of a text type,
 * base64 otherwise, paged by offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "hash.h"
#include "sessions/session.h"
#include "tools_int.h"
#include "utf8.h"
#include "util.h"

#define FILES_ERR_MAX	512

/* Answers with sc as structuredContent and as its serialization. */
static void
files_answer(struct tool_req *rq, json_t *sc)
{
	char	*text;

	if (sc == NULL || (text = json_dumps(sc, JSON_COMPACT)) == NULL) {
		json_decref(sc);
		tool_result(rq, NULL);
		return;
	}
	tool_result(rq, json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content",
	    "type", "text", "text", text, "structuredContent", sc, "isError",
	    0));
	free(text);
}

void
files_list(struct tool_req *rq, const json_t *args)
{
	struct session_args	 a = { 0 };
	const char		*path;
	char			 err[FILES_ERR_MAX];
	json_t			*list;
	int			 truncated;

	if (tool_args(rq, "list_files", args_list_files, args, &a) == -1)
		return;
	path = a.path.v;
	if ((list = session_list_files(rq->srv, rq->principal, a.session_id.v,
	    path, &truncated, err, sizeof(err))) == NULL) {
		tool_error(rq, "%s", err);	/* made ASCII there */
		return;
	}
	files_answer(rq, json_pack("{s:s, s:o, s:b}", "path", path ? path :
	    "/workspace", "files", list, "truncated", truncated));
}

/* Whether mime names text that read_file may send as a string. */
static int
text_mime(const char *mime)
{
	return strncmp(mime, "text/", 5) == 0 ||
	    strcmp(mime, "application/json") == 0 ||
	    strcmp(mime, "image/svg+xml") == 0;
}

/*
 * The length of p that is UTF-8 without NUL, a character cut off at the
 * end left out (unless eof: then it is not text); -1 when not text.
 */
static ssize_t
text_len(const uint8_t *p, size_t len, int eof)
{
	size_t	 i = 0, n, bad;
	int	 cut;

	while (i < len) {
		if (p[i] == '\0')
			return -1;
		if ((n = utf8_next(p + i, len - i, &bad, &cut)) == 0)
			return cut && !eof ? (ssize_t)i : -1;
		i += n;
	}
	return (ssize_t)i;
}

void
files_read(struct tool_req *rq, const json_t *args)
{
	struct session_args	 a = { 0 };
	struct session_file	 f;
	const char		*sid, *path;
	char			 err[FILES_ERR_MAX], *b64;
	uint64_t		 off;
	size_t			 want;
	ssize_t			 tl;
	json_t			*sc;

	if (tool_args(rq, "read_file", args_read_file, args, &a) == -1)
		return;
	sid = a.session_id.v;
	path = a.path.v;
	off = a.offset.set ? (uint64_t)a.offset.v : 0;
	want = a.length.set ? (size_t)a.length.v : FILES_READ_MAX;
	if (session_read_file(rq->srv, rq->principal, sid, path, off, want, &f,
	    err, sizeof(err)) == -1) {
		deliver_refused(rq, sid, path, "read_file", err);
		tool_error(rq, "%s", err);	/* made ASCII there */
		return;
	}
	tl = text_mime(f.mime) ? text_len(f.data, f.len, f.eof) : -1;
	/* A cut-off character waits for the next page. */
	if (tl >= 0 && (size_t)tl < f.len) {
		f.len = (size_t)tl;
		f.eof = 0;
	}
	sc = json_pack("{s:s, s:s, s:I, s:I, s:I, s:b}", "path", path, "mime",
	    f.mime, "size", (json_int_t)f.size, "offset", (json_int_t)off,
	    "length", (json_int_t)f.len, "eof", f.eof);
	if (sc != NULL && !f.eof)
		json_object_set_new(sc, "next_offset",
		    json_integer((json_int_t)(off + f.len)));
	if (sc != NULL && tl >= 0) {
		json_object_set_new(sc, "encoding", json_string("utf-8"));
		json_object_set_new(sc, "text", json_stringn((const char *)
		    f.data, f.len));
	} else if (sc != NULL) {
		b64 = xmalloc(BASE64_LEN(f.len));
		base64_encode(f.data, f.len, b64);
		json_object_set_new(sc, "encoding", json_string("base64"));
		json_object_set_new(sc, "blob", json_string(b64));
		free(b64);
	}
	/* What leaves the sandbox is this page: its bytes are hashed. */
	deliver_record(rq, sid, path, (const char *)f.data, f.len, f.mime,
	    "read_file");
	free(f.data);
	files_answer(rq, sc);
}
