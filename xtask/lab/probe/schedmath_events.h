/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The probe's per-call event: one schedmath__pelt_update per call of
 * __update_load_avg_se, __update_load_avg_blocked_se and __update_load_avg_cfs_rq
 * (kernel/sched/pelt.c), with the inputs of ___update_load_sum / ___update_load_avg
 * and struct sched_avg before and after. Field meanings: fixtures/lab/README.md.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM schedmath

#if !defined(_SCHEDMATH_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SCHEDMATH_EVENTS_H

#include <linux/tracepoint.h>
#include <linux/version.h>
#include "sm_types.h"

/*
 * struct sched_avg flattened to b_* (before the call) and a_* (after it) fields, so
 * that trace-cmd can parse the print format. 6.8 folded struct util_est into one
 * word: print what the kernel stores.
 */
#if SM_UE_ONE_WORD
#define SM_UE_FIELDS(p) __field(unsigned int, p##_ue)
#define SM_UE_ASSIGN(p, s) __entry->p##_ue = (s)->ue0;
#define SM_UE_FMT(p) " " #p "_ue=%u"
#define SM_UE_ARGS(p) , __entry->p##_ue
#else
#define SM_UE_FIELDS(p) __field(unsigned int, p##_ue_enq) __field(unsigned int, p##_ue_ewma)
#define SM_UE_ASSIGN(p, s) __entry->p##_ue_enq = (s)->ue0; __entry->p##_ue_ewma = (s)->ue1;
#define SM_UE_FMT(p) " " #p "_ue_enq=%u " #p "_ue_ewma=%u"
#define SM_UE_ARGS(p) , __entry->p##_ue_enq, __entry->p##_ue_ewma
#endif

#define SM_AVG_FIELDS(p) \
	__field(unsigned long long, p##_lut) \
	__field(unsigned long long, p##_load_sum) \
	__field(unsigned long long, p##_runnable_sum) \
	__field(unsigned int, p##_util_sum) \
	__field(unsigned int, p##_period_contrib) \
	__field(unsigned long, p##_load_avg) \
	__field(unsigned long, p##_runnable_avg) \
	__field(unsigned long, p##_util_avg) \
	SM_UE_FIELDS(p)
#define SM_AVG_ASSIGN(p, s) \
	__entry->p##_lut = (s)->lut; \
	__entry->p##_load_sum = (s)->load_sum; \
	__entry->p##_runnable_sum = (s)->runnable_sum; \
	__entry->p##_util_sum = (s)->util_sum; \
	__entry->p##_period_contrib = (s)->period_contrib; \
	__entry->p##_load_avg = (s)->load_avg; \
	__entry->p##_runnable_avg = (s)->runnable_avg; \
	__entry->p##_util_avg = (s)->util_avg; \
	SM_UE_ASSIGN(p, s)
#define SM_AVG_FMT(p) \
	" " #p "_lut=%llu " #p "_load_sum=%llu " #p "_runnable_sum=%llu " #p "_util_sum=%u " \
	#p "_period_contrib=%u " #p "_load_avg=%lu " #p "_runnable_avg=%lu " #p "_util_avg=%lu" \
	SM_UE_FMT(p)
#define SM_AVG_ARGS(p) \
	, __entry->p##_lut, __entry->p##_load_sum, __entry->p##_runnable_sum, \
	__entry->p##_util_sum, __entry->p##_period_contrib, __entry->p##_load_avg, \
	__entry->p##_runnable_avg, __entry->p##_util_avg SM_UE_ARGS(p)

TRACE_EVENT(schedmath__pelt_update,

	TP_PROTO(const struct sm_call *c, int ret, const struct sm_avg *after),

	TP_ARGS(c, ret, after),

	TP_STRUCT__entry(
		__field(unsigned char, fn)
		__field(unsigned char, kind)
		__field(int, cpu)
		__field(int, pid)
		__array(char, comm, SM_COMM_LEN)
		__array(char, path, SM_PATH_LEN)
		__field(unsigned long long, now)
		__field(unsigned long, lw)
		__field(unsigned long, weight)
		__field(unsigned long, load)
		__field(unsigned long, runnable)
		__field(int, running)
		__field(int, on_rq)
		__field(int, delayed)
		__field(int, nr_queued)
		__field(int, nr_runnable)
		__field(int, ret)
		SM_AVG_FIELDS(b)
		SM_AVG_FIELDS(a)
	),

	TP_fast_assign(
		__entry->fn = c->fn;
		__entry->kind = c->kind;
		__entry->cpu = c->cpu;
		__entry->pid = c->pid;
		memcpy(__entry->comm, c->comm, SM_COMM_LEN);
		memcpy(__entry->path, c->path, SM_PATH_LEN);
		__entry->now = c->now;
		__entry->lw = c->lw;
		__entry->weight = c->weight;
		__entry->load = c->load;
		__entry->runnable = c->runnable;
		__entry->running = c->running;
		__entry->on_rq = c->on_rq;
		__entry->delayed = c->delayed;
		__entry->nr_queued = c->nr_queued;
		__entry->nr_runnable = c->nr_runnable;
		__entry->ret = ret;
		SM_AVG_ASSIGN(b, &c->before)
		SM_AVG_ASSIGN(a, after)
	),

	TP_printk("fn=%s kind=%s cpu=%d pid=%d comm=%s path=%s now=%llu lw=%lu weight=%lu "
		  "load=%lu runnable=%lu running=%d on_rq=%d delayed=%d nr_queued=%d "
		  "nr_runnable=%d ret=%d" SM_AVG_FMT(b) SM_AVG_FMT(a),
		  __print_symbolic(__entry->fn, { 0, "se" }, { 1, "blocked_se" }, { 2, "cfs" }),
		  __print_symbolic(__entry->kind, { 0, "task" }, { 1, "group" }, { 2, "cfs_rq" }),
		  __entry->cpu, __entry->pid, __entry->comm, __entry->path, __entry->now,
		  __entry->lw, __entry->weight, __entry->load, __entry->runnable,
		  __entry->running, __entry->on_rq, __entry->delayed, __entry->nr_queued,
		  __entry->nr_runnable, __entry->ret
		  SM_AVG_ARGS(b) SM_AVG_ARGS(a))
);

#endif /* _SCHEDMATH_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE schedmath_events
#include <trace/define_trace.h>
