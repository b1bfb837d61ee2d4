/*
 * Growable byte buffer with a ceiling fixed at init: nothing grows without
 * bound.  Appends past the ceiling fail with -1 and leave the buffer as it
 * was.  The buffer owns its memory; buf_free releases it.
 */
#ifndef STOCKADE_BUF_H
#define STOCKADE_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t	*data;
	size_t	 len;
	size_t	 cap;
	size_t	 max;
};

void	buf_init(struct buf *, size_t max);
void	buf_free(struct buf *);
void	buf_reset(struct buf *);
int	buf_reserve(struct buf *, size_t extra);
int	buf_add(struct buf *, const void *, size_t);
int	buf_addf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Removes the first n bytes. */
void	buf_consume(struct buf *, size_t n);

#endif
