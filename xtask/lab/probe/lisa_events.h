/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Events named and laid out like LISA's module (ARM-software/lisa,
 * lisa/_assets/kmodules/lisa/ftrace_events.h), fed from the kernel's bare
 * tracepoints, so tools that read LISA traces read the lab's.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM lisa

#if !defined(_SM_LISA_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SM_LISA_EVENTS_H

#include <linux/tracepoint.h>
#include "sm_types.h"

TRACE_EVENT(lisa__sched_pelt_cfs,
	TP_PROTO(int cpu, const char *path, const struct sm_avg *avg),
	TP_ARGS(cpu, path, avg),
	TP_STRUCT__entry(
		__field(int, cpu)
		__array(char, path, SM_PATH_LEN)
		__field(unsigned long, load)
		__field(unsigned long, runnable)
		__field(unsigned long, util)
		__field(unsigned long long, update_time)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		memcpy(__entry->path, path, SM_PATH_LEN);
		__entry->load = avg->load_avg;
		__entry->runnable = avg->runnable_avg;
		__entry->util = avg->util_avg;
		__entry->update_time = avg->lut;
	),
	TP_printk("cpu=%d path=%s load=%lu util=%lu update_time=%llu runnable=%lu",
		  __entry->cpu, __entry->path, __entry->load, __entry->util,
		  __entry->update_time, __entry->runnable)
);

TRACE_EVENT(lisa__sched_pelt_se,
	TP_PROTO(int cpu, const char *path, const char *comm, int pid, const struct sm_avg *avg),
	TP_ARGS(cpu, path, comm, pid, avg),
	TP_STRUCT__entry(
		__field(int, cpu)
		__array(char, path, SM_PATH_LEN)
		__array(char, comm, SM_COMM_LEN)
		__field(int, pid)
		__field(unsigned long, load)
		__field(unsigned long, runnable)
		__field(unsigned long, util)
		__field(unsigned long long, update_time)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		memcpy(__entry->path, path, SM_PATH_LEN);
		memcpy(__entry->comm, comm, SM_COMM_LEN);
		__entry->pid = pid;
		__entry->load = avg->load_avg;
		__entry->runnable = avg->runnable_avg;
		__entry->util = avg->util_avg;
		__entry->update_time = avg->lut;
	),
	TP_printk("cpu=%d path=%s comm=%s pid=%d load=%lu util=%lu update_time=%llu runnable=%lu",
		  __entry->cpu, __entry->path, __entry->comm, __entry->pid, __entry->load,
		  __entry->util, __entry->update_time, __entry->runnable)
);

TRACE_EVENT(lisa__sched_util_est_se,
	TP_PROTO(int cpu, const char *path, const char *comm, int pid, unsigned int enqueued,
		 unsigned int ewma, unsigned long util),
	TP_ARGS(cpu, path, comm, pid, enqueued, ewma, util),
	TP_STRUCT__entry(
		__field(int, cpu)
		__array(char, path, SM_PATH_LEN)
		__array(char, comm, SM_COMM_LEN)
		__field(int, pid)
		__field(unsigned int, enqueued)
		__field(unsigned int, ewma)
		__field(unsigned long, util)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		memcpy(__entry->path, path, SM_PATH_LEN);
		memcpy(__entry->comm, comm, SM_COMM_LEN);
		__entry->pid = pid;
		__entry->enqueued = enqueued;
		__entry->ewma = ewma;
		__entry->util = util;
	),
	TP_printk("cpu=%d path=%s comm=%s pid=%d enqueued=%u ewma=%u util=%lu",
		  __entry->cpu, __entry->path, __entry->comm, __entry->pid,
		  __entry->enqueued, __entry->ewma, __entry->util)
);

TRACE_EVENT(lisa__sched_util_est_cfs,
	TP_PROTO(int cpu, const char *path, unsigned int enqueued, unsigned int ewma,
		 unsigned long util),
	TP_ARGS(cpu, path, enqueued, ewma, util),
	TP_STRUCT__entry(
		__field(int, cpu)
		__array(char, path, SM_PATH_LEN)
		__field(unsigned int, enqueued)
		__field(unsigned int, ewma)
		__field(unsigned long, util)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		memcpy(__entry->path, path, SM_PATH_LEN);
		__entry->enqueued = enqueued;
		__entry->ewma = ewma;
		__entry->util = util;
	),
	TP_printk("cpu=%d path=%s enqueued=%u ewma=%u util=%lu",
		  __entry->cpu, __entry->path, __entry->enqueued, __entry->ewma, __entry->util)
);

TRACE_EVENT(lisa__sched_overutilized,
	TP_PROTO(int overutilized, const char *span),
	TP_ARGS(overutilized, span),
	TP_STRUCT__entry(
		__field(int, overutilized)
		__array(char, span, SM_SPAN_LEN)
	),
	TP_fast_assign(
		__entry->overutilized = overutilized;
		memcpy(__entry->span, span, SM_SPAN_LEN);
	),
	TP_printk("overutilized=%d span=0x%s", __entry->overutilized, __entry->span)
);

TRACE_EVENT(lisa__sched_cpu_capacity,
	TP_PROTO(int cpu, unsigned long capacity),
	TP_ARGS(cpu, capacity),
	TP_STRUCT__entry(
		__field(int, cpu)
		__field(unsigned long, capacity)
	),
	TP_fast_assign(
		__entry->cpu = cpu;
		__entry->capacity = capacity;
	),
	TP_printk("cpu=%d capacity=%lu", __entry->cpu, __entry->capacity)
);

#endif /* _SM_LISA_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE lisa_events
#include <trace/define_trace.h>
