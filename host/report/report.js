/* report.html's own script: reads the data element (JSON that
 * perflink-host wrote from the recording, host/export/report_data.c) and
 * builds the page with uPlot and d3-flame-graph. Text from the recording
 * goes in through text nodes only, never as markup. Any error, the
 * libraries' too, is shown on the page (#report-errors), which the test
 * reads. */
(function () {
	'use strict';
	var errors = [];
	function fail(text) {
		errors.push(text);
		var box = document.getElementById('report-errors');
		if (!box) {
			box = document.createElement('div');
			box.id = 'report-errors';
			box.className = 'error';
			document.body.insertBefore(box, document.body.firstChild);
		}
		box.textContent = 'This report hit an error:\n' + errors.join('\n');
	}
	window.addEventListener('error', function (e) {
		fail(String(e.message) + ' (' + e.filename + ':' + e.lineno + ')');
	});
	document.addEventListener('securitypolicyviolation', function (e) {
		fail('blocked by the page policy: ' + e.violatedDirective + ' ' + e.blockedURI);
	});

	function el(tag, attrs) {
		var e = document.createElement(tag), k, i;
		for (k in attrs || {})
			if (k === 'class')
				e.className = attrs[k];
			else
				e.setAttribute(k, attrs[k]);
		for (i = 2; i < arguments.length; i++)
			if (arguments[i] !== null && arguments[i] !== undefined)
				e.append(arguments[i] instanceof Node ? arguments[i] : String(arguments[i]));
		return e;
	}
	function fmt(v, digits) {
		if (v === null || v === undefined || v === '')
			return '-';
		var n = Number(v);
		if (!isFinite(n))
			return String(v);
		return n.toLocaleString('en-US', { maximumFractionDigits: digits === undefined ? 3 : digits });
	}
	function table(id, head, rows, numeric) {
		var thead = el('thead', null, el('tr', null));
		head.forEach(function (h, i) {
			thead.firstChild.append(el('th', numeric && numeric[i] ? { class: 'num' } : null, h));
		});
		var tbody = el('tbody');
		rows.forEach(function (r) {
			var tr = el('tr', r.attrs || null);
			r.cells.forEach(function (c, i) {
				tr.append(el('td', numeric && numeric[i] ? { class: 'num' } : null, c));
			});
			tbody.append(tr);
		});
		return el('table', id ? { id: id } : null, thead, tbody);
	}
	function section(id, title) {
		var s = el('section', { id: id }, el('h2', null, title));
		root.append(s);
		return s;
	}
	function width() {
		return Math.max(480, Math.min(1150, (root.clientWidth || 1000) - 40));
	}
	function proc(comm, pid) {
		return comm + ' (' + pid + ')';
	}

	var data = JSON.parse(document.getElementById('perflink-data').textContent);
	var root = document.getElementById('report');
	var S = data.summary || {};
	root.textContent = '';
	root.append(el('h1', null, 'perflink report'));

	function header() {
		var s = section('header', 'Run');
		var rows = [], offset;
		function row(k, v) {
			if (v !== undefined && v !== null)
				rows.push({ cells: [k, v] });
		}
		// summary.json's "device": the device's HELLO (docs/wire.md)
		row('device', S['device.program'] !== undefined
			? S['device.program'] + ' ' + (S['device.version'] || '') +
				(S['device.wire_version'] !== undefined && S['device.wire_version'] !== null
					? ', wire version ' + S['device.wire_version'] : '') +
				(S['device.deadline_ms'] !== undefined && S['device.deadline_ms'] !== null
					? ', deadline ' + S['device.deadline_ms'] + ' ms' : '')
			: 'not in the recording (no HELLO from the device: recorded on the device, ' +
				'or by a perflink-host before 0.1.0 kept it)');
		row('transport', S.transport);
		row('recorded for', S.seconds !== undefined ? fmt(S.seconds) + ' s' : undefined);
		row('frames', data.frames);
		row('bytes', S.bytes !== undefined ? fmt(S.bytes, 0) : undefined);
		row('MB/s', S.mbps);
		row('latency', S.latency_source);
		row('payload hash', S.payload_hash);
		row('connects', S.connects);
		if (S.clock_offset_ns !== undefined && S.clock_offset_ns !== null) {
			offset = fmt(Number(S.clock_offset_ns) / 1000, 1) + ' µs';
			if (S.clock_offset_rtt_ns !== undefined && S.clock_offset_rtt_ns !== null)
				offset += ', error at most ±' + fmt(Number(S.clock_offset_rtt_ns) / 2000, 1) +
					' µs (half the best ping round trip)';
			offset += ', ' + fmt(S.clock_offset_samples, 0) + ' samples';
			row('clock offset (host to device)', offset);
		} else if ('clock_offset_ns' in S) {
			row('clock offset (host to device)', 'not measured');
		}
		if (!data.summary)
			row('summary.json', 'missing or not JSON');
		s.append(table('run-header', ['', ''], rows));
	}

	function drops() {
		var s = section('drops', 'Drops and skipped lines');
		var rows = [], L = data.link;
		function row(what, v, from) {
			if (v !== undefined && v !== null)
				rows.push({ cells: [what, fmt(v, 0), from] });
		}
		if (L) {
			row('frames held (link busy)', L.frames_held, 'device, last link_diag');
			row('held frames replaced by a newer one', L.frames_replaced, 'device, last link_diag');
			row('frames lost', L.frames_lost, 'device, last link_diag');
			row('messages dropped', L.messages_dropped, 'device, last link_diag');
		}
		row('messages lost (sequence)', S.lost_messages, 'host, summary.json');
		row('sequence gaps', S.sequence_gaps, 'host, summary.json');
		row('replies dropped', S.reply_drops, 'host, summary.json');
		row('reply failures', S.reply_failures, 'host, summary.json');
		row('frames not kept', S.frames_not_kept, 'host, summary.json');
		row('latency entries the device dropped', S['frame_latency.device_dropped'], 'host, summary.json');
		// the host's malformed-message counters, only those that counted any
		Object.keys(S).filter(function (k) { return k.indexOf('malformed.') === 0 && Number(S[k]) > 0; })
			.forEach(function (k) { row(k.replace('.', ' ') + ' messages', S[k], 'host, summary.json'); });
		data.files.forEach(function (f) {
			if (f.skipped)
				row('skipped lines of ' + f.file, f.skipped, 'of ' + fmt(f.lines, 0) + ' lines');
		});
		row('skipped folded stack lines', data.skipped_stack_lines || null, 'render_window.jsonl');
		data.losses.forEach(function (l) {
			var who = proc(l.comm, l.pid);
			row('stage calls not counted by ' + who, l.dropped_calls, 'device, its last perflink-profile report');
			row('stage calls past the call-site table of ' + who, l.site_overflow_calls, 'device, its last perflink-profile report');
			row('reports of ' + who + ' perflinkd had no room for', l.daemon_dropped_reports, 'device, its last perflink-profile report');
			row('timed stage events of ' + who + ' dropped (full ring)', l.events_dropped, 'device, its last perflink-stage-calls line');
		});
		if (!L)
			rows.push({ cells: ['device link totals', '-', 'no link_diag in the recording'] });
		s.append(table('drop-table', ['what', 'count', 'from'], rows, [false, true, false]));
		var present = data.files.filter(function (f) { return f.present; })
			.map(function (f) { return f.file + ' (' + f.lines + ' lines)'; });
		s.append(el('p', { class: 'note' }, 'Files read: ' + (present.join(', ') || 'none') + '.'));
	}

	function stallHook(u) {
		var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
		ctx.save();
		ctx.fillStyle = 'rgba(220, 40, 40, 0.18)';
		data.stalls.forEach(function (st) {
			var x0 = u.valToPos(st.start_s, 'x', true), x1 = u.valToPos(st.start_s + st.ms / 1000, 'x', true);
			ctx.fillRect(x0, top, Math.max(1, x1 - x0), h);
		});
		ctx.restore();
	}

	function latency() {
		var s = section('latency', 'Latency');
		var L = data.latency;
		if (!L) {
			s.append(el('p', { class: 'empty', id: 'latency-empty' }, 'No frame has a latency in this recording.'));
			return;
		}
		s.append(el('p', null, (L.source === 'device_round_trip'
			? 'The device\'s round trip (its send to the host\'s reply reaching it)'
			: 'One way (device send to host receive, on the device\'s clock)') +
			', ' + fmt(L.frames, 0) + ' frames.'));
		s.append(table('latency-percentiles', ['p50', 'p99', 'p99.9', 'max'],
			[{ cells: [L.p50_ms, L.p99_ms, L.p999_ms, L.max_ms].map(function (v) { return fmt(v) + ' ms'; }) }],
			[true, true, true, true]));

		var bins = Math.min(80, Math.max(20, Math.ceil(2 * Math.sqrt(L.ms.length))));
		var max = L.max_ms > 0 ? L.max_ms : 1, step = max / bins, xs = [], ys = [], i;
		for (i = 0; i < bins; i++) {
			xs.push(i * step);
			ys.push(0);
		}
		L.ms.forEach(function (v) { ys[Math.min(bins - 1, Math.floor(v / step))]++; });
		var hist = el('div', { id: 'latency-histogram', class: 'chart' });
		s.append(el('h3', null, 'Histogram'), hist);
		new uPlot({
			width: width(), height: 260,
			scales: { x: { time: false, range: [0, max] } },
			axes: [{ label: 'latency (ms), bins of ' + fmt(step) + ' ms' }, { label: 'frames' }],
			series: [{ label: 'from (ms)' }, {
				label: 'frames', fill: 'rgba(40, 100, 200, 0.6)', stroke: 'rgb(40, 100, 200)',
				paths: uPlot.paths.bars({ align: 1, size: [1, Infinity] }), points: { show: false },
			}],
		}, [xs, ys], hist);

		var series = el('div', { id: 'latency-series', class: 'chart' });
		s.append(el('h3', null, 'Per frame, by the device\'s send time'), series);
		new uPlot({
			width: width(), height: 300,
			scales: { x: { time: false } },
			axes: [{ label: 'device send time (s from the first frame)' }, { label: 'latency (ms)' }],
			series: [{ label: 'sent at (s)' }, {
				// a dot a frame, no line between them
				label: 'latency (ms)', stroke: 'rgb(40, 100, 200)', paths: function () { return null; },
				points: { show: true, size: L.ms.length > 5000 ? 3 : 5, fill: 'rgb(40, 100, 200)' },
			}],
			hooks: { drawClear: [stallHook] },
		}, [L.t_s, L.ms], series);
		s.append(el('p', { class: 'note', id: 'stall-markers' }, data.stalls.length
			? data.stalls.length + ' stall windows shaded red (' + data.stalls.map(function (st) {
				return proc(st.comm, st.pid) + ' ' + st.mechanism + ' ' + fmt(st.ms) + ' ms at ' + fmt(st.start_s) + ' s';
			}).slice(0, 20).join('; ') + (data.stalls.length > 20 ? '; ...' : '') + ')'
			: 'No stalls in the recording.'));
	}

	function worst() {
		var s = section('worst', 'Worst frames');
		if (!data.worst.length) {
			s.append(el('p', { class: 'empty' }, 'No frame has a latency in this recording.'));
			return;
		}
		s.append(el('p', { class: 'note' }, 'The ' + data.worst.length + ' longest, with the device\'s stage calls ' +
			'during each that took more than ' + data.slow_call_factor + '× their stage\'s median ' +
			'(per process), and the stalls that overlap it.' +
			(data.calls ? '' : ' The recording has no per-call stage events (PERFLINK_PROFILE_EVENTS=1 on the device).')));
		s.append(table('worst-frames', ['frame', 'sent at (s)', 'latency (ms)', 'bytes', 'on the device meanwhile'],
			data.worst.map(function (w) {
				var ul = el('ul', { class: 'events' });
				w.calls.forEach(function (c) {
					ul.append(el('li', { class: 'device-event' }, proc(c.comm, c.pid) + ' thread ' + c.tid + ': ' +
						c.stage + ' ' + fmt(c.wall_ms) + ' ms (median ' + fmt(c.median_ms) + ' ms, CPU ' +
						fmt(c.cpu_ms) + ' ms, ' + c.result + '), from ' + fmt(c.at_ms) + ' ms'));
				});
				if (w.calls_not_shown)
					ul.append(el('li', { class: 'note' }, w.calls_not_shown + ' more slow calls'));
				w.stalls.forEach(function (st) {
					ul.append(el('li', { class: 'stall' }, 'stall: ' + proc(st.comm, st.pid) + ' ' + st.mechanism +
						' ' + fmt(st.ms) + ' ms' + (st.bully_pid ? ', bully ' + proc(st.bully_comm, st.bully_pid) : '')));
				});
				if (!ul.firstChild)
					ul.append(el('li', { class: 'note' }, 'nothing unusual recorded'));
				return { attrs: { class: 'worst-frame' }, cells: [w.frame_id, fmt(w.send_s), fmt(w.ms), fmt(w.bytes, 0), ul] };
			}), [true, true, true, true, false]));
	}

	function stages() {
		var s = section('stages', 'Stages');
		if (!data.stages.length) {
			s.append(el('p', { class: 'empty' }, 'No stage profile in this recording (telemetry/perflink-profile.jsonl).'));
			return;
		}
		s.append(el('p', { class: 'note' }, 'Per process and stage, from its last report. Wall time that is not CPU time is waiting.'));
		s.append(table('stage-table', ['pid', 'process', 'stage', 'calls', 'wall (ms)', 'CPU (ms)',
			'wall/call (µs)', 'CPU/call (µs)', 'waiting'],
			data.stages.map(function (st) {
				var n = st.calls || 0;
				return { attrs: { class: 'stage-row' }, cells: [st.pid, st.comm, st.stage, fmt(n, 0), fmt(st.wall_ms),
					fmt(st.cpu_ms), n ? fmt(st.wall_ms * 1000 / n, 1) : '-', n ? fmt(st.cpu_ms * 1000 / n, 1) : '-',
					st.wall_ms > 0 ? fmt(Math.max(0, 100 * (1 - st.cpu_ms / st.wall_ms)), 1) + ' %' : '-'] };
			}), [true, false, false, true, true, true, true, true, true]));
	}

	function flame() {
		var s = section('flame', 'Render thread flame graph');
		if (!data.flame.length) {
			s.append(el('p', { class: 'empty' }, 'No render sampler windows in this recording (PERFLINK_SAMPLE=1 on the device).'));
			return;
		}
		var tree = { name: 'all', value: 0, children: [] }, windows = 0;
		function child(node, name) {
			var c = node.index && node.index.get(name);
			if (!c) {
				c = { name: name, value: 0, children: [] };
				node.index = node.index || new Map();
				node.index.set(name, c);
				node.children.push(c);
			}
			return c;
		}
		data.flame.forEach(function (p) {
			var top = child(tree, proc(p.comm, p.pid));
			windows += p.windows;
			p.stacks.forEach(function (st) {
				var node = top;
				top.value += st[1];
				tree.value += st[1];
				st[0].split(';').forEach(function (f) {
					node = child(node, f);
					node.value += st[1];
				});
			});
		});
		(function strip(n) { delete n.index; n.children.forEach(strip); })(tree);
		s.append(el('p', { class: 'note', id: 'flame-note' }, fmt(tree.value, 0) + ' samples in ' + windows +
			' windows, merged per process. Click a frame to zoom.'));
		var div = el('div', { id: 'flame-graph', class: 'chart' });
		s.append(div);
		var chart = flamegraph.default().width(width()).cellHeight(18).transitionDuration(0).minFrameSize(1).sort(true);
		d3.select(div).datum(tree).call(chart);
	}

	function resources() {
		var s = section('resources', 'Resources');
		if (!data.processes.length) {
			s.append(el('p', { class: 'empty' }, 'No resource samples in this recording (telemetry/resources.jsonl).'));
			return;
		}
		var box = el('div', { class: 'charts', id: 'resource-charts' });
		s.append(el('p', { class: 'note' }, 'Per process: CPU (100 % is one core, from the step in its ticks between two samples) and resident memory.'), box);
		data.processes.forEach(function (p) {
			var div = el('div', { class: 'chart resource-chart' }, el('h3', null, proc(p.comm, p.pid)));
			box.append(div);
			if (p.cpu_pct[0].length + p.rss_mib[0].length < 2) {
				div.append(el('p', { class: 'note' }, 'one sample: ' + (p.rss_mib[1].length ? fmt(p.rss_mib[1][0]) + ' MiB resident' : 'nothing to chart')));
				return;
			}
			var joined = uPlot.join([p.cpu_pct, p.rss_mib]);
			new uPlot({
				width: Math.min(560, width()), height: 220, spanGaps: true,
				scales: { x: { time: false }, pct: { auto: true }, mib: { auto: true } },
				axes: [{ label: 's' }, { scale: 'pct', label: 'CPU %' }, { scale: 'mib', side: 1, label: 'RSS MiB', grid: { show: false } }],
				series: [{ label: 's' },
					{ label: 'CPU %', scale: 'pct', stroke: 'rgb(200, 80, 40)' },
					{ label: 'RSS MiB', scale: 'mib', stroke: 'rgb(40, 140, 80)' }],
			}, joined, div);
		});
	}

	try {
		header();
		if (data.empty) {
			root.append(el('p', { class: 'empty', id: 'empty-notice' },
				'This recording is empty: it has no frames, stage reports, stalls, stage calls, render sampler windows, resource samples or link totals, so there is nothing to chart.'));
			drops();
			document.body.setAttribute('data-report', 'empty');
			return;
		}
		drops();
		latency();
		worst();
		stages();
		flame();
		resources();
		document.body.setAttribute('data-report', 'done');
	} catch (e) {
		fail(String(e && e.stack || e));
	}
})();
