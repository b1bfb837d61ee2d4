/*
 * Bounded capture of a sandboxed program's output.  Every byte is counted;
 * at most `max` are kept: the first two thirds and the last third, with a
 * marker in between saying how much was left out.  The text handed out is
 * always valid UTF-8: invalid sequences (and NUL) become U+FFFD.
 *
 * Ownership: a capture owns its buffers; capture_text returns a new string
 * the caller frees.
 */
#ifndef STOCKADE_CAPTURE_H
#define STOCKADE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "utf8.h"

struct capture {
	size_t		 max;		/* bytes kept in all */
	size_t		 headmax;	/* 2/3 of max */
	size_t		 tailmax;	/* the rest */
	uint8_t		*head;
	size_t		 headlen;
	uint8_t		*tail;		/* ring of tailmax bytes */
	size_t		 tailpos;	/* next write position in the ring */
	size_t		 taillen;	/* bytes in the ring */
	uint64_t	 total;		/* every byte seen */
};

void	 capture_init(struct capture *, size_t max);
void	 capture_add(struct capture *, const void *, size_t);
int	 capture_truncated(const struct capture *);
/*
 * The kept output as UTF-8: all of it, or head + "\n[... N bytes omitted
 * ...]\n" + tail when more than max bytes came.  NUL-terminated; *len
 * excludes the NUL.
 */
char	*capture_text(const struct capture *, size_t *len);
void	 capture_free(struct capture *);

#endif
