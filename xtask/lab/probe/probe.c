// SPDX-License-Identifier: GPL-2.0-only
/*
 * schedmath lab probe: records every PELT update of the fair class and re-emits the
 * scheduler's bare tracepoints as LISA-style events.
 *
 * kretprobes on __update_load_avg_se, __update_load_avg_blocked_se and
 * __update_load_avg_cfs_rq (kernel/sched/pelt.c): the entry handler copies the
 * arguments, the inputs pelt.c passes to ___update_load_sum()/___update_load_avg() and
 * struct sched_avg; the return handler copies sched_avg again and emits
 * schedmath:schedmath__pelt_update. struct cfs_rq, rq, task_group and root_domain are
 * private (kernel/sched/sched.h): their member offsets come from the kernel's BTF through
 * the generated offsets.h (cargo xtask lab builds it with pahole).
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/cgroup.h>
#include <linux/cpumask.h>
#include <linux/string.h>
#include <linux/utsname.h>
#include <linux/atomic.h>
#include <trace/events/sched.h>

#include "offsets.h"
#include "sm_types.h"

#define CREATE_TRACE_POINTS
#include "schedmath_events.h"
#include "lisa_events.h"

#define SM_AT(ptr, off, type) (*(type *)((char *)(ptr) + (off)))

/* v6.12 ("sched/fair: Implement delayed dequeue") added sched_entity.sched_delayed. */
#define SM_HAS_DELAYED (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0))

static const struct sched_avg *cfs_avg(const void *cfs)
{
	return (const struct sched_avg *)((const char *)cfs + SM_OFF_CFS_RQ_AVG);
}

static int rq_cpu(const void *rq)
{
	return SM_AT(rq, SM_OFF_RQ_CPU, int);
}

static int cfs_cpu(const void *cfs)
{
	return cfs ? rq_cpu(SM_AT(cfs, SM_OFF_CFS_RQ_RQ, void *)) : -1;
}

/* The cgroup path of a cfs_rq's task group, "(null)" without one (LISA's convention). */
static void cfs_path(const void *cfs, char *buf)
{
	const void *tg;
	const struct cgroup_subsys_state *css;

	memset(buf, 0, SM_PATH_LEN);
	if (!cfs) {
		strscpy(buf, "(null)", SM_PATH_LEN);
		return;
	}
	tg = SM_AT(cfs, SM_OFF_CFS_RQ_TG, void *);
	css = (const struct cgroup_subsys_state *)((const char *)tg + SM_OFF_TASK_GROUP_CSS);
	if (!css->cgroup) {
		/* an autogroup: the lab boots with noautogroup, so this should not show */
		strscpy(buf, "(autogroup)", SM_PATH_LEN);
		return;
	}
	cgroup_path(css->cgroup, buf, SM_PATH_LEN);
}

/* scale_load_down() of a 64-bit kernel (kernel/sched/sched.h). */
static unsigned long sm_scale_load_down(unsigned long w)
{
	if (w)
		w = max(2UL, w >> SCHED_FIXEDPOINT_SHIFT);
	return w;
}

static void sm_copy_avg(struct sm_avg *d, const struct sched_avg *s)
{
	d->lut = s->last_update_time;
	d->load_sum = s->load_sum;
	d->runnable_sum = s->runnable_sum;
	d->util_sum = s->util_sum;
	d->period_contrib = s->period_contrib;
	d->load_avg = s->load_avg;
	d->runnable_avg = s->runnable_avg;
	d->util_avg = s->util_avg;
#if SM_UE_ONE_WORD
	d->ue0 = s->util_est;
	d->ue1 = 0;
#else
	d->ue0 = s->util_est.enqueued;
	d->ue1 = s->util_est.ewma;
#endif
}

static int se_delayed(const struct sched_entity *se)
{
#if SM_HAS_DELAYED
	return se->sched_delayed;
#else
	return 0;
#endif
}

static int cfs_nr_queued(const void *cfs)
{
	return SM_AT(cfs, SM_OFF_CFS_RQ_H_NR_QUEUED, unsigned int);
}

static int cfs_nr_runnable(const void *cfs)
{
#ifdef SM_OFF_CFS_RQ_H_NR_RUNNABLE
	return SM_AT(cfs, SM_OFF_CFS_RQ_H_NR_RUNNABLE, unsigned int);
#else
	return -1;
#endif
}

/* Identity and weight of a sched_entity (task, or the group entity of a cgroup). */
static void fill_se(struct sm_call *c, const struct sched_entity *se)
{
	c->cpu = cfs_cpu(se->cfs_rq);
	if (se->my_q) {
		c->kind = SM_KIND_GROUP;
		c->pid = -1;
		strscpy(c->comm, "(null)", SM_COMM_LEN);
		cfs_path(se->my_q, c->path);
		c->nr_queued = cfs_nr_queued(se->my_q);
		c->nr_runnable = cfs_nr_runnable(se->my_q);
	} else {
		const struct task_struct *p = container_of(se, struct task_struct, se);

		c->kind = SM_KIND_TASK;
		c->pid = p->pid;
		memcpy(c->comm, p->comm, SM_COMM_LEN);
		cfs_path(se->cfs_rq, c->path);
		c->nr_queued = -1;
		c->nr_runnable = -1;
	}
	c->lw = se->load.weight;
	c->weight = sm_scale_load_down(c->lw);
	c->on_rq = se->on_rq;
	c->delayed = se_delayed(se);
	c->avg = (void *)&se->avg;
	sm_copy_avg(&c->before, &se->avg);
}

/* se_runnable() (kernel/sched/sched.h) */
static unsigned long sm_se_runnable(const struct sched_entity *se)
{
	if (se_delayed(se))
		return 0;
	if (!se->my_q)
		return !!se->on_rq;
	return se->runnable_weight;
}

static atomic64_t sm_calls[3];

/* __update_load_avg_se(u64 now, struct cfs_rq *cfs_rq, struct sched_entity *se) */
static int se_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sm_call *c = (struct sm_call *)ri->data;
	const void *cfs = (const void *)regs->si;
	const struct sched_entity *se = (const struct sched_entity *)regs->dx;

	c->fn = SM_FN_SE;
	c->now = regs->di;
	fill_se(c, se);
	c->load = !!se->on_rq;
	c->runnable = sm_se_runnable(se);
	c->running = SM_AT(cfs, SM_OFF_CFS_RQ_CURR, const void *) == (const void *)se;
	return 0;
}

/* __update_load_avg_blocked_se(u64 now, struct sched_entity *se) */
static int blocked_se_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sm_call *c = (struct sm_call *)ri->data;
	const struct sched_entity *se = (const struct sched_entity *)regs->si;

	c->fn = SM_FN_BLOCKED_SE;
	c->now = regs->di;
	fill_se(c, se);
	c->load = 0;
	c->runnable = 0;
	c->running = 0;
	return 0;
}

/* __update_load_avg_cfs_rq(u64 now, struct cfs_rq *cfs_rq) */
static int cfs_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sm_call *c = (struct sm_call *)ri->data;
	const void *cfs = (const void *)regs->si;
	int nr_runnable = cfs_nr_runnable(cfs);

	c->fn = SM_FN_CFS;
	c->kind = SM_KIND_CFS_RQ;
	c->now = regs->di;
	c->cpu = cfs_cpu(cfs);
	c->pid = -1;
	strscpy(c->comm, "(null)", SM_COMM_LEN);
	cfs_path(cfs, c->path);
	c->lw = SM_AT(cfs, SM_OFF_CFS_RQ_LOAD, struct load_weight).weight;
	c->weight = 1;
	c->load = sm_scale_load_down(c->lw);
	c->nr_queued = cfs_nr_queued(cfs);
	c->nr_runnable = nr_runnable;
	/* pelt.c passes h_nr_runnable where cfs_rq has it, h_nr_running before */
	c->runnable = nr_runnable >= 0 ? nr_runnable : c->nr_queued;
	c->running = SM_AT(cfs, SM_OFF_CFS_RQ_CURR, const void *) != NULL;
	c->on_rq = -1;
	c->delayed = -1;
	c->avg = (void *)cfs_avg(cfs);
	sm_copy_avg(&c->before, cfs_avg(cfs));
	return 0;
}

static int sm_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	const struct sm_call *c = (const struct sm_call *)ri->data;
	struct sm_avg after;

	sm_copy_avg(&after, (const struct sched_avg *)c->avg);
	atomic64_inc(&sm_calls[c->fn]);
	trace_schedmath__pelt_update(c, (int)regs_return_value(regs), &after);
	return 0;
}

static struct kretprobe sm_krp[3] = {
	[SM_FN_SE] = {
		.kp.symbol_name = "__update_load_avg_se",
		.entry_handler = se_entry,
		.handler = sm_ret,
		.data_size = sizeof(struct sm_call),
	},
	[SM_FN_BLOCKED_SE] = {
		.kp.symbol_name = "__update_load_avg_blocked_se",
		.entry_handler = blocked_se_entry,
		.handler = sm_ret,
		.data_size = sizeof(struct sm_call),
	},
	[SM_FN_CFS] = {
		.kp.symbol_name = "__update_load_avg_cfs_rq",
		.entry_handler = cfs_entry,
		.handler = sm_ret,
		.data_size = sizeof(struct sm_call),
	},
};

static struct kretprobe *sm_krps[3];

/* --- the bare tracepoints, as LISA's events --- */

static void se_identity(const struct sched_entity *se, int *cpu, char *path, char *comm, int *pid)
{
	*cpu = cfs_cpu(se->cfs_rq);
	cfs_path(se->my_q, path);
	memset(comm, 0, SM_COMM_LEN);
	if (se->my_q) {
		strscpy(comm, "(null)", SM_COMM_LEN);
		*pid = -1;
	} else {
		const struct task_struct *p = container_of(se, struct task_struct, se);

		memcpy(comm, p->comm, SM_COMM_LEN);
		*pid = p->pid;
	}
}

static void tp_pelt_se(void *data, struct sched_entity *se)
{
	char path[SM_PATH_LEN], comm[SM_COMM_LEN];
	struct sm_avg avg;
	int cpu, pid;

	se_identity(se, &cpu, path, comm, &pid);
	sm_copy_avg(&avg, &se->avg);
	trace_lisa__sched_pelt_se(cpu, path, comm, pid, &avg);
}

static void tp_pelt_cfs(void *data, struct cfs_rq *cfs)
{
	char path[SM_PATH_LEN];
	struct sm_avg avg;

	cfs_path(cfs, path);
	sm_copy_avg(&avg, cfs_avg(cfs));
	trace_lisa__sched_pelt_cfs(cfs_cpu(cfs), path, &avg);
}

static void tp_util_est_se(void *data, struct sched_entity *se)
{
	char path[SM_PATH_LEN], comm[SM_COMM_LEN];
	unsigned int enq, ewma;
	int cpu, pid;

	se_identity(se, &cpu, path, comm, &pid);
#if SM_UE_ONE_WORD
	/* one word, the task's estimate: shown as both (max(enqueued, ewma) stays right) */
	enq = se->avg.util_est & ~UTIL_AVG_UNCHANGED;
	ewma = enq;
#else
	enq = se->avg.util_est.enqueued & ~UTIL_AVG_UNCHANGED;
	ewma = se->avg.util_est.ewma;
#endif
	trace_lisa__sched_util_est_se(cpu, path, comm, pid, enq, ewma, se->avg.util_avg);
}

static void tp_util_est_cfs(void *data, struct cfs_rq *cfs)
{
	const struct sched_avg *a = cfs_avg(cfs);
	char path[SM_PATH_LEN];

	cfs_path(cfs, path);
#if SM_UE_ONE_WORD
	trace_lisa__sched_util_est_cfs(cfs_cpu(cfs), path, a->util_est, 0, a->util_avg);
#else
	trace_lisa__sched_util_est_cfs(cfs_cpu(cfs), path, a->util_est.enqueued,
				       a->util_est.ewma, a->util_avg);
#endif
}

static void tp_overutilized(void *data, struct root_domain *rd, bool overutilized)
{
	char span[SM_SPAN_LEN];
	const struct cpumask *mask = SM_AT(rd, SM_OFF_ROOT_DOMAIN_SPAN, struct cpumask *);

	memset(span, 0, sizeof(span));
	scnprintf(span, sizeof(span), "%*pb", cpumask_pr_args(mask));
	trace_lisa__sched_overutilized(overutilized, span);
}

static void tp_cpu_capacity(void *data, struct rq *rq)
{
	trace_lisa__sched_cpu_capacity(rq_cpu(rq), SM_AT(rq, SM_OFF_RQ_CPU_CAPACITY, unsigned long));
}

static int sm_get_stats(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "se=%lld/%d blocked_se=%lld/%d cfs=%lld/%d (recorded/missed)\n",
			  atomic64_read(&sm_calls[0]), sm_krp[0].nmissed,
			  atomic64_read(&sm_calls[1]), sm_krp[1].nmissed,
			  atomic64_read(&sm_calls[2]), sm_krp[2].nmissed);
}

static const struct kernel_param_ops sm_stats_ops = { .get = sm_get_stats };
module_param_cb(stats, &sm_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats, "PELT calls recorded and kretprobe misses per function");

static int sm_nr_tp;

/* Unregister the sm_nr_tp tracepoint probes registered so far, then the kretprobes. */
static void sm_teardown(void)
{
	if (sm_nr_tp > 0)
		unregister_trace_pelt_se_tp(tp_pelt_se, NULL);
	if (sm_nr_tp > 1)
		unregister_trace_pelt_cfs_tp(tp_pelt_cfs, NULL);
	if (sm_nr_tp > 2)
		unregister_trace_sched_util_est_se_tp(tp_util_est_se, NULL);
	if (sm_nr_tp > 3)
		unregister_trace_sched_util_est_cfs_tp(tp_util_est_cfs, NULL);
	if (sm_nr_tp > 4)
		unregister_trace_sched_overutilized_tp(tp_overutilized, NULL);
	if (sm_nr_tp > 5)
		unregister_trace_sched_cpu_capacity_tp(tp_cpu_capacity, NULL);
	tracepoint_synchronize_unregister();
	unregister_kretprobes(sm_krps, 3);
}

static int __init sm_init(void)
{
	int i, err;

	if (strcmp(utsname()->release, SM_KERNEL_RELEASE)) {
		pr_err("schedmath_probe: offsets are for %s, running %s\n", SM_KERNEL_RELEASE,
		       utsname()->release);
		return -EINVAL;
	}
	for (i = 0; i < 3; i++) {
		/* one instance per CPU is in flight at most: the rq lock is held */
		sm_krp[i].maxactive = 4 * num_possible_cpus() + 16;
		sm_krps[i] = &sm_krp[i];
	}
	err = register_kretprobes(sm_krps, 3);
	if (err) {
		pr_err("schedmath_probe: kretprobes (__update_load_avg_*): %d\n", err);
		return err;
	}
	err = register_trace_pelt_se_tp(tp_pelt_se, NULL);
	err = err ?: (sm_nr_tp++, register_trace_pelt_cfs_tp(tp_pelt_cfs, NULL));
	err = err ?: (sm_nr_tp++, register_trace_sched_util_est_se_tp(tp_util_est_se, NULL));
	err = err ?: (sm_nr_tp++, register_trace_sched_util_est_cfs_tp(tp_util_est_cfs, NULL));
	err = err ?: (sm_nr_tp++, register_trace_sched_overutilized_tp(tp_overutilized, NULL));
	err = err ?: (sm_nr_tp++, register_trace_sched_cpu_capacity_tp(tp_cpu_capacity, NULL));
	if (err) {
		pr_err("schedmath_probe: tracepoint %d: %d\n", sm_nr_tp, err);
		sm_teardown();
		return err;
	}
	sm_nr_tp++;
	pr_info("schedmath_probe: loaded for %s\n", SM_KERNEL_RELEASE);
	return 0;
}

static void __exit sm_exit(void)
{
	sm_teardown();
}

module_init(sm_init);
module_exit(sm_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("schedmath lab: PELT update recorder and LISA-style scheduler events");
