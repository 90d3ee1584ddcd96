/*
 * scdata records — names and validation of the typed records.
 *
 * The reader guarantees only that a record lies inside an intact chunk;
 * sc_record_check() guarantees that a typed reader may cast the payload
 * to its struct and read its variable tail (strings, ips) without running
 * past the record.  A payload longer than its struct is accepted: that is
 * how fixed-size records grow new fields at their end (docs/data-format.md).
 */
#include "format/scdata.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name;
	size_t fixed;            /* the least payload: the struct as first written */
	enum { TAIL_NONE, TAIL_STRING, TAIL_ARGV, TAIL_IPS } tail;
	size_t whole;            /* the struct now, if it grew since (0: fixed;
				    only TAIL_NONE records grow) */
} rec_types[SC_REC_MAX] = {
	[SC_REC_SESSION]      = { "session",      sizeof(struct sc_rec_session),      TAIL_ARGV },
	[SC_REC_SESSION_END]  = { "session_end",  sizeof(struct sc_rec_session_end),  TAIL_NONE },
	[SC_REC_PROCESS]      = { "process",      sizeof(struct sc_rec_process),      TAIL_STRING },
	[SC_REC_THREAD]       = { "thread",       sizeof(struct sc_rec_thread),       TAIL_STRING },
	[SC_REC_MODULE]       = { "module",       sizeof(struct sc_rec_module),       TAIL_STRING },
	[SC_REC_CCT_NODE]     = { "cct_node",     sizeof(struct sc_rec_cct_node),     TAIL_NONE },
	[SC_REC_CALLSITE]     = { "callsite",     sizeof(struct sc_rec_callsite),     TAIL_NONE },
	[SC_REC_THREAD_STATS] = { "thread_stats", sizeof(struct sc_rec_thread_stats), TAIL_NONE },
	[SC_REC_STACK]        = { "stack",        sizeof(struct sc_rec_stack),        TAIL_IPS },
	[SC_REC_SAMPLES]      = { "samples",      sizeof(struct sc_rec_samples),      TAIL_NONE },
	[SC_REC_LOST]         = { "lost",         sizeof(struct sc_rec_lost),         TAIL_NONE },
	[SC_REC_PROBE_COST]   = { "probe_cost",   sizeof(struct sc_rec_probe_cost),   TAIL_NONE },
	[SC_REC_CCT_REMOVED]  = { "cct_removed",  sizeof(struct sc_rec_cct_removed),  TAIL_NONE },
	[SC_REC_CCT_SAMPLES]  = { "cct_samples",  sizeof(struct sc_rec_cct_samples),  TAIL_NONE },
	/* 72 bytes before the detach cause */
	[SC_REC_THREAD_MORE]  = { "thread_more",  72,                                 TAIL_NONE,
				  sizeof(struct sc_rec_thread_more) },
	[SC_REC_PATCHED]      = { "patched",      sizeof(struct sc_rec_patched),      TAIL_NONE },
	[SC_REC_LIBCALL]      = { "libcall",      sizeof(struct sc_rec_libcall),      TAIL_STRING },
	[SC_REC_TIMELINE]     = { "timeline",     sizeof(struct sc_rec_timeline),     TAIL_NONE },
	[SC_REC_UNRECORDED]   = { "unrecorded",   sizeof(struct sc_rec_unrecorded),   TAIL_STRING },
};

const char *sc_rec_type_name(unsigned type)
{
	return type < SC_REC_MAX ? rec_types[type].name : NULL;
}

const char *sc_os_cat_name(unsigned cat)
{
	static const char *const names[SC_OS_NCAT] = {
		[SC_OS_SWITCH]  = "switch",
		[SC_OS_SYSCALL] = "syscall",
		[SC_OS_FAULT]   = "fault",
	};

	return cat < SC_OS_NCAT ? names[cat] : NULL;
}

/* argc NUL-terminated strings, one after the other, inside [p, p+len). */
static int check_strings(const char *p, size_t len, uint32_t argc)
{
	/* each string takes at least one byte: cheap bound before the walk */
	if (argc > len)
		return -EINVAL;
	while (argc--) {
		const char *nul = memchr(p, '\0', len);

		if (!nul)
			return -EINVAL;
		len -= nul + 1 - p;
		p = nul + 1;
	}
	return 0;
}

static_assert(sizeof(struct sc_rec_thread_more) <= SC_REC_WHOLE_MAX, "room for a whole record");

const void *sc_record_whole(const struct sc_record *rec, void *buf)
{
	size_t whole;

	if ((unsigned)rec->type == 0 || (unsigned)rec->type >= SC_REC_MAX)
		return rec->data;
	whole = rec_types[rec->type].whole;
	if (rec->size >= whole)
		return rec->data;
	memset(buf, 0, whole);
	memcpy(buf, rec->data, rec->size);
	return buf;
}

int sc_record_check(const struct sc_record *rec)
{
	const char *tail;
	size_t fixed, tail_len;

	if ((unsigned)rec->type == 0 || (unsigned)rec->type >= SC_REC_MAX)
		return 0;             /* unknown: nothing we could check */
	fixed = rec_types[rec->type].fixed;
	if (rec->size < fixed)
		return -EINVAL;
	tail = (const char *)rec->data + fixed;
	tail_len = rec->size - fixed;

	switch (rec_types[rec->type].tail) {
	case TAIL_NONE:
		return 0;
	case TAIL_STRING:
		if (rec->type == SC_REC_MODULE &&
		    ((const struct sc_rec_module *)rec->data)->build_id_len >
		    sizeof(((struct sc_rec_module *)0)->build_id))
			return -EINVAL;
		return check_strings(tail, tail_len, 1);
	case TAIL_ARGV:
		return check_strings(tail, tail_len,
				     ((const struct sc_rec_session *)rec->data)->argc);
	case TAIL_IPS:
		return tail_len / sizeof(uint64_t) <
		       ((const struct sc_rec_stack *)rec->data)->nframes ? -EINVAL : 0;
	}
	return -EINVAL;
}

const char *sc_repair_cause_name(unsigned cause)
{
	static const char *const names[SC_REPAIR_NCAUSE] = {
		[SC_REPAIR_LONGJMP]   = "longjmp",
		[SC_REPAIR_EXCEPTION] = "exception",
		[SC_REPAIR_SIGNAL]    = "signal",
		[SC_REPAIR_OTHER]     = "other",
		[SC_REPAIR_EXIT]      = "exit",
		[SC_REPAIR_KILL]      = "kill",
		[SC_REPAIR_DETACH]    = "detach",
	};

	return cause < SC_REPAIR_NCAUSE ? names[cause] : NULL;
}
