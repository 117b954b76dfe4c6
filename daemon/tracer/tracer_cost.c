/* --cost-split over a run: the phases' names, and the run's accounts made
 * from each tick's (the readers time themselves, inline in tracer_priv.h). */
#include "tracer_priv.h"

#include <string.h>

const char *pl__tracer_phase_name(enum pl_tracer_phase ph)
{
	static const char *const names[PL_TPHASE_N] = {
		[PL_TPHASE_DISKSTATS] = "diskstats", [PL_TPHASE_VMSTAT] = "vmstat",
		[PL_TPHASE_MEMINFO] = "meminfo",     [PL_TPHASE_PSI] = "pressure",
		[PL_TPHASE_STAT] = "stat",           [PL_TPHASE_LOADAVG] = "loadavg",
		[PL_TPHASE_WATCHED] = "watched",     [PL_TPHASE_OTHERS] = "others",
		[PL_TPHASE_SKIPPED] = "skipped",     [PL_TPHASE_SCAN] = "scan",
		[PL_TPHASE_PROBE] = "probe",
		[PL_TPHASE_NEW] = "new_pids",        [PL_TPHASE_OUTPUT] = "output",
		[PL_TPHASE_EVENTS] = "events",
		[PL_TPHASE_DWATCH] = "d_watch",
	};

	return (unsigned)ph < PL_TPHASE_N ? names[ph] : "?";
}

void pl__tcost_merge(struct pl_tcost_run *run, struct pl_tcost *tick, uint64_t wall_ns,
		     uint64_t cpu_ns)
{
	/* ran through: at most 20 us and 5% of it spent off the CPU */
	bool clean = wall_ns <= cpu_ns + 20000 + cpu_ns / 20;

	run->ticks++;
	run->tick_cpu_ns += cpu_ns;
	run->clean_ticks += clean;
	for (int i = 0; i < PL_TPHASE_N; i++) {
		const struct pl_tracer_phase_cost *c = &tick->ph[i];
		struct pl_tracer_phase_cost *a = &run->all[i], *k = &run->clean[i];

		a->items += c->items;
		a->reads += c->reads;
		if (clean) {
			k->ns += c->ns;
			k->read_ns += c->read_ns;
			k->items += c->items;
			k->reads += c->reads;
		}
	}
	memset(tick, 0, sizeof(*tick));
}

/* v per unit over the clean ticks, times the units of all ticks. */
static uint64_t scale(uint64_t v, uint64_t units_clean, uint64_t units_all)
{
	return units_clean ? (uint64_t)((double)v / (double)units_clean * (double)units_all) : 0;
}

void pl__tcost_report(const struct pl_tcost_run *run, struct pl_tracer_stats *out)
{
	out->cost_split = true;
	out->cost_ticks = run->ticks;
	out->cost_clean_ticks = run->clean_ticks;
	out->tick_cpu_ns = run->tick_cpu_ns;
	for (int i = 0; i < PL_TPHASE_N; i++) {
		const struct pl_tracer_phase_cost *a = &run->all[i], *k = &run->clean[i];

		out->phase[i].items = a->items;
		out->phase[i].reads = a->reads;
		out->phase[i].ns = scale(k->ns, k->items, a->items);
		out->phase[i].read_ns = scale(k->read_ns, k->reads, a->reads);
	}
}
