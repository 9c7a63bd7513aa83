/* SPDX-License-Identifier: GPL-2.0-only */
/* Plain records the probe copies out of the scheduler's structures. */
#ifndef _SM_TYPES_H
#define _SM_TYPES_H

#include <linux/types.h>
#include <linux/version.h>

#define SM_COMM_LEN 16 /* TASK_COMM_LEN */
#define SM_PATH_LEN 64 /* LISA's PATH_SIZE */
#define SM_SPAN_LEN 128 /* LISA's MAX_SPAN_SIZE */

/* v6.8 ("sched/fair: Remove util_est.enqueued") made sched_avg.util_est one word. */
#define SM_UE_ONE_WORD (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0))

/* struct sched_avg, widened: util_est as ue0 (enqueued, or the one word) and ue1 (ewma). */
struct sm_avg {
	u64 lut;
	u64 load_sum;
	u64 runnable_sum;
	u32 util_sum;
	u32 period_contrib;
	unsigned long load_avg;
	unsigned long runnable_avg;
	unsigned long util_avg;
	u32 ue0;
	u32 ue1;
};

enum sm_fn { SM_FN_SE = 0, SM_FN_BLOCKED_SE = 1, SM_FN_CFS = 2 };
enum sm_kind { SM_KIND_TASK = 0, SM_KIND_GROUP = 1, SM_KIND_CFS_RQ = 2 };

/* What the entry handler saw: identity, the update's inputs, sched_avg before. */
struct sm_call {
	u8 fn;
	u8 kind;
	int cpu;
	int pid;
	char comm[SM_COMM_LEN];
	char path[SM_PATH_LEN];
	u64 now;
	unsigned long lw;
	unsigned long weight;
	unsigned long load;
	unsigned long runnable;
	int running;
	int on_rq;
	int delayed;
	int nr_queued;
	int nr_runnable;
	void *avg;
	struct sm_avg before;
};

#endif
