/*
 * Artifact types: what a file is, from its content (magic bytes, then text
 * heuristics); the name only breaks ties the content leaves open.  The
 * bytes are the sandbox's and hostile: every offset read is bounds-checked
 * against the buffer, and nothing is parsed past a cap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts.h"
#include "utf8.h"

/*
 * JSON bigger than this is judged by its first character only: parsing
 * costs many times the file's size in memory, and the file is hostile.
 */
#define ARTIFACT_JSON_PARSE_MAX	(1024 * 1024)
#define CSV_RECORDS_MIN		2
#define ZIP_ENTRIES_MAX		4096	/* central directory entries read */
#define ZIP_EOCD_LEN		22
#define ZIP_COMMENT_MAX		65535
#define ZIP_CDH_LEN		46	/* central directory header */
#define ZIP_LFH_LEN		30	/* local file header */

static const struct {
	const char	*name;
	const char	*mime;
} art_types[ART_NTYPES] = {
	[ART_PNG] =	{ "png",	"image/png" },
	[ART_JPEG] =	{ "jpeg",	"image/jpeg" },
	[ART_SVG] =	{ "svg",	"image/svg+xml" },
	[ART_CSV] =	{ "csv",	"text/csv" },
	[ART_JSON] =	{ "json",	"application/json" },
	[ART_TXT] =	{ "txt",	"text/plain" },
	[ART_HTML] =	{ "html",	"text/html" },
	[ART_PDF] =	{ "pdf",	"application/pdf" },
	[ART_NPY] =	{ "npy",	"application/x-npy" },
	[ART_NPZ] =	{ "npz",	"application/x-npz" },
	[ART_PARQUET] =	{ "parquet",	"application/vnd.apache.parquet" },
	[ART_XLSX] =	{ "xlsx",	"application/vnd.openxmlformats-"
					"officedocument.spreadsheetml.sheet" },
	[ART_ZIP] =	{ "zip",	"application/zip" },
	[ART_MD] =	{ "md",		"text/markdown" },
};

static const uint8_t	png_magic[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a
};
static const uint8_t	jpeg_magic[] = { 0xff, 0xd8, 0xff };
static const uint8_t	utf8_bom[] = { 0xef, 0xbb, 0xbf };
static const uint8_t	npy_magic[] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };
static const char	pdf_magic[] = "%PDF-";
static const char	par_magic[] = "PAR1";
static const char	zip_local[] = "PK\003\004";
static const char	zip_central[] = "PK\001\002";
static const char	zip_end[] = "PK\005\006";

int
artifact_type_parse(const char *s)
{
	int	 t;

	for (t = 0; t < ART_NTYPES; t++)
		if (strcmp(s, art_types[t].name) == 0)
			return t;
	return -1;
}

void
artifact_type_list(char *buf, size_t len)
{
	size_t	 off = 0;
	int	 t, n;

	buf[0] = '\0';
	for (t = 0; t < ART_NTYPES; t++) {
		n = snprintf(buf + off, len - off, "%s%s", t ? ", " : "",
		    art_types[t].name);
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
}

const char *
artifact_type_name(enum artifact_type t)
{
	return (unsigned)t < ART_NTYPES ? art_types[t].name : "unknown";
}

const char *
artifact_mime(enum artifact_type t)
{
	return (unsigned)t < ART_NTYPES ? art_types[t].mime :
	    "application/octet-stream";
}

/* ---------------------------------------------------------------- sniff */

/*
 * Length of the well-formed UTF-8 sequence at p, 0 when the buffer ends
 * inside a sequence that could still be well-formed, -1 when ill-formed
 * (overlong, surrogate, past U+10FFFF, stray continuation) or NUL.
 */
static int
utf8_step(const uint8_t *p, size_t len)
{
	size_t	 n, bad;
	int	 cut;

	if ((n = utf8_next(p, len, &bad, &cut)) > 0)
		return (int)n;
	return cut ? 0 : -1;
}

/* 1 when p is UTF-8 without NUL; a cut-off last character is fine when the
 * buffer is only the start of the file. */
static int
utf8_text(const uint8_t *p, size_t len, int complete)
{
	size_t	 i = 0;
	int	 n;

	while (i < len) {
		if (p[i] >= 0x01 && p[i] < 0x80) {
			i++;
			continue;
		}
		if ((n = utf8_step(p + i, len - i)) == -1)
			return 0;
		if (n == 0)
			return !complete;
		i += (size_t)n;
	}
	return 1;
}

static int
is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static size_t
skip_space(const uint8_t *p, size_t len, size_t i)
{
	while (i < len && is_space(p[i]))
		i++;
	return i;
}

static size_t
skip_bom(const uint8_t *p, size_t len)
{
	return len >= sizeof(utf8_bom) &&
	    memcmp(p, utf8_bom, sizeof(utf8_bom)) == 0 ? sizeof(utf8_bom) : 0;
}

/* Does p[i..] start with s?  ASCII case folded when nocase. */
static int
at(const uint8_t *p, size_t len, size_t i, const char *s, int nocase)
{
	size_t	 n = strlen(s), k;
	uint8_t	 a, b;

	if (i > len || len - i < n)
		return 0;
	for (k = 0; k < n; k++) {
		a = p[i + k];
		b = (uint8_t)s[k];
		if (nocase && a >= 'A' && a <= 'Z')
			a = (uint8_t)(a - 'A' + 'a');
		if (a != b)
			return 0;
	}
	return 1;
}

/* The index just past the first `end` at or after i, or 0 when none. */
static size_t
past(const uint8_t *p, size_t len, size_t i, const char *end)
{
	const uint8_t	*q;

	if (i >= len)
		return 0;
	if ((q = memmem(p + i, len - i, end, strlen(end))) == NULL)
		return 0;
	return (size_t)(q - p) + strlen(end);
}

/* After "<!DOCTYPE": the '>' that closes it, stepping over an internal
 * subset in brackets. */
static size_t
past_doctype(const uint8_t *p, size_t len, size_t i)
{
	int	 depth = 0;

	for (; i < len; i++) {
		if (p[i] == '[')
			depth++;
		else if (p[i] == ']' && depth > 0)
			depth--;
		else if (p[i] == '>' && depth == 0)
			return i + 1;
	}
	return 0;
}

/* A tag name ends at whitespace, '>' or "/>"; "<svgx" is not "<svg". */
static int
name_ends(const uint8_t *p, size_t len, size_t i)
{
	return i < len && (is_space(p[i]) || p[i] == '>' || p[i] == '/');
}

/*
 * SVG: after an optional BOM, whitespace, processing instructions (the XML
 * declaration), comments and a doctype, the first element is <svg.  A
 * prolog longer than the window is not recognised.
 */
static int
sniff_svg(const uint8_t *p, size_t len)
{
	size_t	 i = skip_bom(p, len);

	for (;;) {
		i = skip_space(p, len, i);
		if (at(p, len, i, "<?", 0))
			i = past(p, len, i + 2, "?>");
		else if (at(p, len, i, "<!--", 0))
			i = past(p, len, i + 4, "-->");
		else if (at(p, len, i, "<!doctype", 1))
			i = past_doctype(p, len, i + 9);
		else
			break;
		if (i == 0)
			return 0;
	}
	return at(p, len, i, "<svg", 0) && name_ends(p, len, i + 4);
}

/* HTML: after an optional BOM, whitespace and comments, "<!DOCTYPE html"
 * or "<html", in any case. */
static int
sniff_html(const uint8_t *p, size_t len)
{
	size_t	 i = skip_bom(p, len), j;

	for (;;) {
		i = skip_space(p, len, i);
		if (!at(p, len, i, "<!--", 0))
			break;
		if ((i = past(p, len, i + 4, "-->")) == 0)
			return 0;
	}
	if (at(p, len, i, "<!doctype", 1)) {
		j = skip_space(p, len, i + 9);
		return j > i + 9 && at(p, len, j, "html", 1) &&
		    name_ends(p, len, j + 4);
	}
	return at(p, len, i, "<html", 1) && name_ends(p, len, i + 5);
}

/*
 * JSON: the first non-space byte opens an object or array; when the buffer
 * is the whole file (and not too big to parse) jansson must accept all of
 * it.
 */
static int
sniff_json(const uint8_t *p, size_t len, int complete)
{
	json_error_t	 e;
	json_t		*j;
	size_t		 i = skip_space(p, len, 0);

	if (i >= len || (p[i] != '{' && p[i] != '['))
		return 0;
	if (!complete || len > ARTIFACT_JSON_PARSE_MAX)
		return 1;
	if ((j = json_loadb((const char *)p, len, 0, &e)) == NULL)
		return 0;
	json_decref(j);
	return 1;
}

/*
 * CSV, kept simple: within the first ARTIFACT_SNIFF_LEN bytes, records end
 * at a newline outside double quotes (a quote toggles quoting, so "" inside
 * a quoted field nets out); empty records are ignored; there are at least
 * CSV_RECORDS_MIN others and every one has the same number, at least one,
 * of commas outside quotes.  The last record counts only when it is known
 * to be whole: the window is the entire file and it closes its quotes.
 */
static int
sniff_csv(const uint8_t *p, size_t len, int complete)
{
	size_t	 wl = len < ARTIFACT_SNIFF_LEN ? len : ARTIFACT_SNIFF_LEN;
	size_t	 i, start = 0, end, records = 0, commas = 0, want = 0;
	int	 quoted = 0, whole = complete && len <= ARTIFACT_SNIFF_LEN;

	for (i = 0; i <= wl; i++) {
		if (i < wl) {
			if (p[i] == '"')
				quoted = !quoted;
			else if (p[i] == ',' && !quoted)
				commas++;
			if (p[i] != '\n' || quoted)
				continue;
		} else if (!whole)
			break;
		else if (quoted)
			return 0;
		end = i;
		if (end > start && p[end - 1] == '\r')
			end--;
		if (end > start) {
			if (commas == 0 || (records > 0 && commas != want))
				return 0;
			want = commas;
			records++;
		}
		commas = 0;
		start = i + 1;
	}
	return records >= CSV_RECORDS_MIN;
}

/* ---------------------------------------------------------------- zip */

static unsigned
le16(const uint8_t *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static int
ends_with(const uint8_t *s, size_t n, const char *suffix)
{
	size_t	 k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* What one entry name says: an xl/ part (a workbook), or a .npy array. */
static void
zip_name(const uint8_t *name, size_t n, int *xl, unsigned *npy)
{
	if (n >= 3 && memcmp(name, "xl/", 3) == 0)
		*xl = 1;
	if (ends_with(name, n, ".npy"))
		(*npy)++;
}

/*
 * A zip's kind from its central directory, found through the end record
 * in the last 64 KiB: any xl/ entry makes it xlsx, entries that are all
 * .npy make it npz.  -1 when there is no usable directory (only the start
 * of the file is at hand, or it is damaged); every offset is checked
 * against the buffer first.
 */
static int
zip_directory(const uint8_t *p, size_t len)
{
	size_t		 e, q, end, lo, n;
	unsigned	 count, i, npy = 0;
	int		 xl = 0;

	if (len < ZIP_EOCD_LEN)
		return -1;
	lo = len > ZIP_EOCD_LEN + ZIP_COMMENT_MAX ?
	    len - ZIP_EOCD_LEN - ZIP_COMMENT_MAX : 0;
	for (e = len - ZIP_EOCD_LEN + 1; e-- > lo; )
		if (memcmp(p + e, zip_end, 4) == 0)
			break;
	if (e + 1 <= lo || memcmp(p + e, zip_end, 4) != 0)
		return -1;
	count = le16(p + e + 10);
	q = le32(p + e + 16);
	end = q + (size_t)le32(p + e + 12);
	if (q > e || end > e || end < q)
		return -1;
	for (i = 0; i < count && i < ZIP_ENTRIES_MAX; i++) {
		if (end - q < ZIP_CDH_LEN || memcmp(p + q, zip_central, 4) != 0)
			return -1;
		n = le16(p + q + 28);
		if (end - q - ZIP_CDH_LEN < n)
			return -1;
		zip_name(p + q + ZIP_CDH_LEN, n, &xl, &npy);
		n += le16(p + q + 30) + (size_t)le16(p + q + 32);
		if (end - q - ZIP_CDH_LEN < n)
			return -1;
		q += ZIP_CDH_LEN + n;
	}
	if (xl)
		return ART_XLSX;
	return count > 0 && npy == count ? ART_NPZ : ART_ZIP;
}

/* Only the start is known: the first local entry's name. */
static int
zip_first_entry(const uint8_t *p, size_t len)
{
	size_t		 n;
	unsigned	 npy = 0;
	int		 xl = 0;

	if (len < ZIP_LFH_LEN || (n = le16(p + 26)) > len - ZIP_LFH_LEN)
		return ART_ZIP;
	zip_name(p + ZIP_LFH_LEN, n, &xl, &npy);
	return xl ? ART_XLSX : npy ? ART_NPZ : ART_ZIP;
}

static int
sniff_zip(const uint8_t *p, size_t len, int complete)
{
	int	 t;

	if (complete && (t = zip_directory(p, len)) != -1)
		return t;
	return zip_first_entry(p, len);
}

int
artifact_refine(int t, const uint8_t *p, size_t len, const char *name)
{
	size_t	 n = strlen(name);

	(void)p;
	(void)len;
	if (t == ART_TXT && (ends_with((const uint8_t *)name, n, ".md") ||
	    ends_with((const uint8_t *)name, n, ".markdown")))
		return ART_MD;
	if (t == ART_ZIP && ends_with((const uint8_t *)name, n, ".xlsx"))
		return ART_XLSX;
	if (t == ART_ZIP && ends_with((const uint8_t *)name, n, ".npz"))
		return ART_NPZ;
	return t;
}

int
artifact_sniff(const uint8_t *p, size_t len, int complete)
{
	if (len >= sizeof(pdf_magic) - 1 &&
	    memcmp(p, pdf_magic, sizeof(pdf_magic) - 1) == 0)
		return ART_PDF;
	if (len >= sizeof(npy_magic) &&
	    memcmp(p, npy_magic, sizeof(npy_magic)) == 0)
		return ART_NPY;
	/* Parquet ends with its magic too; when the end is at hand, it must. */
	if (len >= 4 && memcmp(p, par_magic, 4) == 0 && (!complete ||
	    (len >= 8 && memcmp(p + len - 4, par_magic, 4) == 0)))
		return ART_PARQUET;
	if (len >= 4 && (memcmp(p, zip_local, 4) == 0 ||
	    memcmp(p, zip_end, 4) == 0))
		return sniff_zip(p, len, complete);
	if (len >= sizeof(png_magic) &&
	    memcmp(p, png_magic, sizeof(png_magic)) == 0)
		return ART_PNG;
	if (len >= sizeof(jpeg_magic) &&
	    memcmp(p, jpeg_magic, sizeof(jpeg_magic)) == 0)
		return ART_JPEG;
	/* Everything else is text: every byte given must be UTF-8. */
	if (!utf8_text(p, len, complete))
		return -1;
	if (sniff_svg(p, len < ARTIFACT_SNIFF_LEN ? len : ARTIFACT_SNIFF_LEN))
		return ART_SVG;
	if (sniff_html(p, len < ARTIFACT_SNIFF_LEN ? len : ARTIFACT_SNIFF_LEN))
		return ART_HTML;
	if (sniff_json(p, len, complete))
		return ART_JSON;
	if (sniff_csv(p, len, complete))
		return ART_CSV;
	return ART_TXT;
}

