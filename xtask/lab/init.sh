#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the lab's initramfs (cargo xtask lab run). /lab/config.sh, written by the
# xtask, sets MODULES, EVENTS, BUFFER_KB, CALIBRATION (rt-app ns per loop, empty: measure)
# and lists the groups in /lab/groups; each group
# N has /lab/group-N.json (its rt-app tasks) and /lab/group-N.cg (cgroup path,
# cpu.weight, cpu.idle).
# Results go to /out, written as a tar to the raw disk /dev/vda; every line this
# script prints starting "lab:" is read back by the xtask from the console.
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
export TRACEEVENT_PLUGIN_DIR=/usr/lib/x86_64-linux-gnu/traceevent/plugins

die() {
	echo "lab: error: $*"
	poweroff -f
	sleep 5
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing || die "cannot mount tracefs"
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /sys/fs/cgroup /out
mount -t cgroup2 cgroup2 /sys/fs/cgroup || die "cannot mount cgroup2"

. /lab/config.sh

echo "lab: booted $(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"
for m in $MODULES; do
	insmod "/lib/modules/$m" || die "insmod $m failed"
done
insmod /lab/schedmath_probe.ko || die "insmod schedmath_probe.ko failed (dmesg: $(dmesg | grep schedmath | tail -3))"
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -b /dev/vda ] || die "no /dev/vda (virtio_blk) for the results: $(dmesg | grep -i virtio | tail -3)"

# What the README reports about the guest.
{
	echo "kernel=$(uname -r)"
	echo "cpus=$(grep -c ^processor /proc/cpuinfo)"
	echo "preempt=$(cat /sys/kernel/debug/sched/preempt 2>/dev/null)"
	echo "cpuidle_driver=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	awk '$3 ~ /^__update_load_avg_(se|blocked_se|cfs_rq)$/ { n[$3]++ }
		END { for (s in n) print "kallsyms_" s "=" n[s] }' /proc/kallsyms
	echo "boot_uptime=$(cut -d' ' -f1 /proc/uptime)"
} > /out/guest.txt

echo "+cpu" > /sys/fs/cgroup/cgroup.subtree_control || die "cannot enable the cpu controller"

# One rt-app per group, each started inside its cgroup.
cat > /tmp/run.sh <<'EOF'
#!/bin/sh
for n in $(cat /lab/groups); do
	sh -c "echo \$\$ > /sys/fs/cgroup$(cut -d' ' -f1 /lab/group-$n.cg)/cgroup.procs && cd /tmp && exec rt-app /tmp/group-$n.json" > /out/rt-app-$n.log 2>&1 &
done
wait
EOF
for n in $(cat /lab/groups); do
	set -- $(cat /lab/group-$n.cg)
	if [ "$1" != / ]; then
		# inner levels delegate the cpu controller; tasks live in the leaves only
		d=/sys/fs/cgroup
		for part in $(echo "$1" | tr / ' '); do
			[ "$d" != /sys/fs/cgroup ] && echo "+cpu" > "$d/cgroup.subtree_control"
			d="$d/$part"
			mkdir -p "$d" || die "cannot create cgroup $d"
		done
		echo "$2" > "/sys/fs/cgroup$1/cpu.weight" || die "cannot set cpu.weight of $1"
		if [ "$3" = 1 ]; then
			echo 1 > "/sys/fs/cgroup$1/cpu.idle" || die "cannot set cpu.idle of $1"
		fi
	fi
done

# rt-app's own calibration loop takes a minute under TCG: measure it once (outside the
# trace) when the xtask has no cached value, and write the number into every group file.
if [ -z "$CALIBRATION" ]; then
	echo '{"tasks": {"c": {"loop": 1, "run": 1000}}, "global": {"duration": 1, "calibration": "CPU0", "logdir": "/tmp"}}' > /tmp/calib.json
	CALIBRATION=$(cd /tmp && rt-app /tmp/calib.json 2>&1 | sed -n 's/.*pLoad = \([0-9]*\)ns.*/\1/p' | head -1)
	[ -n "$CALIBRATION" ] || die "rt-app calibration printed no pLoad"
fi
echo "lab: calibration ns=$CALIBRATION"
echo "rtapp_calibration_ns=$CALIBRATION" >> /out/guest.txt
for n in $(cat /lab/groups); do
	sed "s/\"__SCHEDMATH_CALIBRATION__\"/$CALIBRATION/" /lab/group-$n.json > /tmp/group-$n.json
done

echo "lab: run start uptime=$(cut -d' ' -f1 /proc/uptime)"
cd /tmp
trace-cmd record -q -b "$BUFFER_KB" -C local $EVENTS -o /tmp/trace.dat sh /tmp/run.sh > /out/trace-cmd.log 2>&1
rc=$?
echo "lab: run end rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
cat /sys/module/schedmath_probe/parameters/stats > /out/probe-stats.txt
cp /tmp/trace.dat /out/trace.dat 2>/dev/null || echo "lab: error: no trace.dat ($(tail -3 /out/trace-cmd.log))"
dmesg > /out/dmesg.txt
tar -cf /dev/vda -C /out . || echo "lab: error: cannot write the results to /dev/vda"
sync
echo "lab: done"
poweroff -f
