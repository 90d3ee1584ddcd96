/*
 * varint — unsigned LEB128 and zigzag, as the timeline codes its items
 * (scdata.h, SC_REC_TIMELINE; the runtime's own buffers, engine.h).
 * Header-only: the injected runtime links nothing of the tool's.
 */
#ifndef SC_FORMAT_VARINT_H
#define SC_FORMAT_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define SC_VARINT_MAX 10          /* bytes of the longest (a 64-bit value) */

/* Write v at p (room for SC_VARINT_MAX bytes); the byte after it. */
static inline uint8_t *sc_varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Read a varint from [*pp, end) into *v; 0, or -1 if it runs past end or
 * past 64 bits (*pp then unchanged). */
static inline int sc_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	unsigned shift = 0;

	while (p < end) {
		uint8_t b = *p++;

		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			*pp = p;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

static inline uint64_t sc_zigzag(int64_t x)
{
	return ((uint64_t)x << 1) ^ (uint64_t)(x >> 63);
}

static inline int64_t sc_unzigzag(uint64_t z)
{
	return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

#endif
