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

/*
 * The same without a branch on the length (v below 2^56, else the loop):
 * 8 bytes are stored at p whatever the length, so p must have that room.
 * A probe writes three varints per call; the loop's exit, which depends
 * on the value, mispredicted about once a call.
 */
static inline uint8_t *sc_varint_put8(uint8_t *p, uint64_t v)
{
	uint64_t packed, cont;
	unsigned len;

	if (__builtin_expect(v >> 56 != 0, 0))
		return sc_varint_put(p, v);
	packed = (v & 0x7full) | (v & 0x3f80ull) << 1 | (v & 0x1fc000ull) << 2 |
		 (v & 0xfe00000ull) << 3 | (v & 0x7f0000000ull) << 4 | (v & 0x3f800000000ull) << 5 |
		 (v & 0x1fc0000000000ull) << 6 | (v & 0xfe000000000000ull) << 7;
	len = (unsigned)(70 - __builtin_clzll(v | 1)) / 7;
	cont = 0x8080808080808080ull & ((1ull << (8 * (len - 1))) - 1);
	packed |= cont;
	__builtin_memcpy(p, &packed, 8);
	return p + len;
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
