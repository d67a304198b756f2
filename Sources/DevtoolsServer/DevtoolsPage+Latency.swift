extension DevtoolsPage {
    /// The latency panel's script: a bench report (`zflux bench --json`) opened from a file or sent by
    /// a `zflux bench --attach` run, drawn as its percentile curve, histogram and timeline, and that
    /// run's live feed as it goes. Drawn in SVG of its own, with no chart library.
    static let latencyScript = #"""
        // A bench report (`zflux bench --json`): the e2e latency by percentile, as `--svg` draws it, and
        // each second's p50 and p99 over the run. Drawn here, with no chart library.
        const SVG = "http://www.w3.org/2000/svg";
        function svgElement(tag, attributes, text) {
          const node = document.createElementNS(SVG, tag);
          for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
          if (text !== undefined) node.textContent = text;
          return node;
        }
        const microseconds = (us) => us >= 1e6 ? `${(us / 1e6).toPrecision(3)} s` : us >= 1000 ? `${(us / 1000).toPrecision(3)} ms` : `${us.toPrecision(3)} µs`;

        // An x axis label centred on its tick, but kept inside the 480-wide box: the last one of an axis
        // that ends at the right edge ends there (it was cut off), the first starts at the left.
        function tickLabel(x, y, label) {
          const half = 3.1 * label.length;   // 10 px monospace: about 6.2 px a character
          const anchor = x + half > 478 ? "end" : x - half < 2 ? "start" : "middle";
          return svgElement("text", {x: anchor === "end" ? 478 : anchor === "start" ? 2 : x, y, "text-anchor": anchor, class: "tick"}, label);
        }

        // Lines of [x, y] points in a 480 × 260 box, y on a log scale; `xTicks` are [x, label]. `rate`, if
        // given, is one more line on a linear scale of its own, from 0 to a little above its highest point.
        function plot(svg, title, lines, xTicks, xRange, rate) {
          const left = 60, right = 470, top = 20, bottom = 230;
          const ys = lines.flatMap((line) => line.points.map(([, y]) => Math.max(y, 1)));
          const low = Math.floor(Math.log10(Math.min(...ys))), high = Math.ceil(Math.log10(Math.max(...ys)) + 0.001);
          const px = (x) => left + (right - left) * (x - xRange[0]) / Math.max(xRange[1] - xRange[0], 1e-9);
          const py = (y) => bottom - (bottom - top) * (Math.log10(Math.max(y, 1)) - low) / Math.max(high - low, 1);
          const children = [svgElement("text", {x: left, y: 12}, title),
            svgElement("line", {class: "axis", x1: left, y1: bottom, x2: right, y2: bottom}),
            svgElement("line", {class: "axis", x1: left, y1: top, x2: left, y2: bottom})];
          for (let decade = low; decade <= high; decade++) {
            children.push(svgElement("text", {x: 2, y: py(10 ** decade) + 3}, microseconds(10 ** decade)));
          }
          for (const [x, label] of xTicks) children.push(tickLabel(px(x), bottom + 14, label));
          for (const line of lines) {
            children.push(svgElement("polyline", {class: line.name, "data-series": line.name,
              points: line.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ")}));
          }
          const legend = lines.map((line) => [line.name, line.label]);
          if (rate && rate.points.length) {
            const most = Math.max(1, ...rate.points.map(([, y]) => y));
            children.push(svgElement("polyline", {class: "rate", "data-series": "rate",
              points: rate.points.map(([x, y]) => `${px(x).toFixed(1)},${(bottom - (bottom - top) * y / (most * 1.25)).toFixed(1)}`).join(" ")}));
            legend.push(["rate", `${rate.label}, ≤ ${Math.round(most).toLocaleString("en")}`]);
          }
          const legendX = right - Math.max(60, 6.2 * Math.max(...legend.map(([, label]) => label.length)));
          legend.forEach(([name, label], index) => children.push(svgElement("text", {x: legendX, y: top + 12 * (index + 1), class: name}, label)));
          svg.replaceChildren(...children);
        }

        // The report's summary and plots emptied, with `summary` saying why: nothing of a report before
        // stays drawn under a new run's status or a file that failed to open, as if it were theirs.
        function clearBench(summary, className) {
          $("bench-summary").className = className || "dim";
          $("bench-summary").textContent = summary;
          for (const id of ["bench-percentiles", "bench-histogram", "bench-timeline"]) $(id).replaceChildren();
        }

        function showBench(report, name) {
          if (!report || !report.e2e || !report.setup) {
            clearBench(`${name}: not a bench report (${programName()} bench --json writes one)`, "bad");
            return;
          }
          const e2e = report.e2e;
          $("bench-summary").className = report.lost ? "bad" : "dim";
          $("bench-summary").textContent = `${name}: ${report.setup.transport}, ${Math.round(report.rate_target)}/s asked, `
            + `${Math.round(report.rate_achieved)}/s held, ${report.acked} acknowledged, ${report.lost} lost; e2e p50 ${microseconds(e2e.p50_us)}, `
            + `p99 ${microseconds(e2e.p99_us)}, p99.9 ${microseconds(e2e.p999_us)}, max ${microseconds(e2e.max_us)}`;
          // By percentile: x is the number of nines (90% → 1, 99% → 2 …), as HdrHistogram plots it.
          const nines = (p) => -Math.log10(Math.max(1 - p / 100, 1e-6));
          const points = (report.e2e_percentiles || []).map((point) => [nines(point.percentile), point.us]);
          const fallback = [[nines(50), e2e.p50_us], [nines(90), e2e.p90_us], [nines(99), e2e.p99_us], [nines(99.9), e2e.p999_us], [nines(99.99), e2e.p9999_us]];
          const distribution = points.length ? points : fallback;
          const widest = Math.max(4, ...distribution.map(([x]) => x));
          const percentTicks = [[0, "0%"], [1, "90%"], [2, "99%"], [3, "99.9%"], [4, "99.99%"], [5, "99.999%"]].filter(([x]) => x < widest - 0.5);
          plot($("bench-percentiles"), "e2e latency by percentile", [{name: "p50", label: "e2e", points: distribution}],
            percentTicks.concat([[widest, "max"]]), [0, widest]);
          bars($("bench-histogram"), report.e2e_histogram || []);
          const timeline = report.timeline || [];
          if (!timeline.length) {
            $("bench-timeline").replaceChildren(svgElement("text", {x: 20, y: 40}, "no timeline in this report (made before zflux reported one)"));
            return;
          }
          const seconds = timeline.map((second) => second.second);
          const first = Math.min(...seconds), last = Math.max(...seconds);
          const step = Math.max(1, Math.ceil((last - first) / 8));
          const ticks = [];
          for (let second = first; second <= last; second += step) ticks.push([second, `${second}s`]);
          plot($("bench-timeline"), "e2e latency, second by second", [
            {name: "p50", label: "p50", points: timeline.map((s) => [s.second, s.p50_us])},
            {name: "p99", label: "p99", points: timeline.map((s) => [s.second, s.p99_us])},
          ], ticks, [first, Math.max(last, first + 1)]);
        }

        // The e2e histogram: a bar per bucket (eight a decade), x the latency on a log scale, y how many.
        function bars(svg, buckets) {
          if (!buckets.length) {
            svg.replaceChildren(svgElement("text", {x: 20, y: 40}, "no histogram in this report (made before zflux reported one)"));
            return;
          }
          const left = 60, right = 470, top = 20, bottom = 230;
          const low = Math.log10(Math.max(buckets[0].from_us, 1)), high = Math.log10(buckets[buckets.length - 1].to_us);
          const px = (us) => left + (right - left) * (Math.log10(Math.max(us, 1)) - low) / Math.max(high - low, 1e-9);
          const most = Math.max(1, ...buckets.map((bucket) => bucket.count));
          const children = [svgElement("text", {x: left, y: 12}, "e2e latency histogram (actions per bucket)"),
            svgElement("line", {class: "axis", x1: left, y1: bottom, x2: right, y2: bottom}),
            svgElement("text", {x: 2, y: top + 8}, most.toLocaleString("en")), svgElement("text", {x: 2, y: bottom}, "0")];
          // Labels at 1, 2 and 5 of each decade the buckets cover (decades alone when they are many).
          const steps = high - low > 3 ? [1] : [1, 2, 5];
          for (let decade = Math.floor(low); decade <= Math.ceil(high); decade++) {
            for (const step of steps) {
              const us = step * 10 ** decade, at = Math.log10(us);
              if (at >= low && at <= high) children.push(tickLabel(px(us), bottom + 14, microseconds(us)));
            }
          }
          for (const bucket of buckets) {
            const height = (bottom - top) * bucket.count / most, x = px(bucket.from_us);
            children.push(svgElement("rect", {class: "bar", x: x.toFixed(1), y: (bottom - height).toFixed(1),
              width: Math.max(px(bucket.to_us) - x - 1, 1).toFixed(1), height: height.toFixed(1),
              "data-count": String(bucket.count)}, undefined));
          }
          svg.replaceChildren(...children);
        }

        function readBenchFile() {
          const file = $("bench-file").files[0];
          if (!file) return;
          file.text().then((body) => {
            let parsed = null;
            try { parsed = JSON.parse(body); } catch (error) {
              clearBench(`${file.name}: not JSON (${error.message})`, "bad");
              return;
            }
            showBench(parsed, file.name);
          });
        }

        // `zflux bench --attach` against this cluster, as it runs: its live feed, relayed by the server a
        // line at a time (a start, each trial, a line a second of ACK latency, then the report or the
        // error). Lines may come twice (a page joining as they are sent): each is keyed, so that is harmless.
        const newBenchLive = () => ({start: null, trial: null, seconds: new Map(), ended: null});
        let benchLive = newBenchLive();
        // The start line of the last run seen: a page sent a run's lines again (it reconnected) keeps
        // what it drew of that run; a new run empties the report panels until its own report comes.
        let benchRunSeen = "";
        const noReportYet = "no report for this run yet";
        function addBenchLines(message) {
          if (message.reset) benchLive = newBenchLive();
          for (const line of message.lines) {
            if (line.kind === "start" && text(line) !== text(benchLive.start)) {
              benchLive = Object.assign(newBenchLive(), {start: line});
              if (text(line) !== benchRunSeen) clearBench(`${noReportYet} (bench --attach, pid ${line.pid}): it comes when the run ends`);
              benchRunSeen = text(line);
            } else if (line.kind === "trial" && (!benchLive.trial || benchLive.trial.trial !== line.trial)) {
              benchLive.trial = line;
              benchLive.seconds = new Map();
            } else if (line.kind === "second" && (!benchLive.trial || benchLive.trial.trial === line.trial)) benchLive.seconds.set(line.second, line);
            else if (line.kind === "report" || line.kind === "failed") {
              const fresh = !benchLive.ended;
              benchLive.ended = line;
              if (line.kind === "report" && fresh) showBench(line.report, "bench --attach");
              // Said again for a run that ends without one, unless a file was opened meanwhile.
              if (line.kind === "failed" && fresh && $("bench-summary").textContent.startsWith(noReportYet)) {
                clearBench(`no report for this run: it stopped without one (${line.error})`);
              }
            }
          }
          drawBenchLive();
        }

        const count = (n) => Math.round(n).toLocaleString("en");
        function drawBenchLive() {
          const seconds = [...benchLive.seconds.values()].sort((a, b) => a.second - b.second);
          const latest = seconds[seconds.length - 1], status = $("bench-live-status");
          const ended = benchLive.ended, start = benchLive.start, trial = benchLive.trial;
          status.className = ended && ended.kind === "failed" ? "bad" : "dim";
          if (!start) status.textContent = "no bench --attach run seen";
          else if (ended && ended.kind === "failed") status.textContent = `bench stopped: ${ended.error}`;
          else if (ended) status.textContent = `bench finished (pid ${start.pid}): its report is drawn below, e2e latency included`;
          else if (trial && trial.label === "floor") status.textContent = `bench running: measuring the floor (C programs) at ${count(trial.rate)}/s, no live figures`;
          else if (!latest) status.textContent = `bench running (pid ${start.pid}): ${trial ? `trial ${trial.trial} at ${count(trial.rate)}/s starting` : "preparing"}`;
          else status.textContent = `bench running: ${latest.second + 1} s${latest.warm_up ? " (warm-up)" : ""}, ${count(latest.target_rate)}/s asked, `
            + `${count(latest.acks)} acknowledged in the last second, ${count(latest.sent)} sent and ${count(latest.acked)} answered in all; `
            + `ACK p50 ${microseconds(latest.ack_p50_us)}, p99 ${microseconds(latest.ack_p99_us)} (live: ACK latency; the report's e2e when the run ends)`;
          const acked = seconds.filter((s) => s.acks > 0);
          if (!acked.length) {
            $("bench-live").replaceChildren(svgElement("text", {x: 20, y: 40}, start ? "no ACK yet in this trial" : "no live run"));
            return;
          }
          const first = seconds[0].second, last = latest.second;
          const step = Math.max(1, Math.ceil((last - first) / 8));
          const ticks = [];
          for (let second = first; second <= last; second += step) ticks.push([second, `${second}s`]);
          plot($("bench-live"), `ACK latency, second by second${ended ? "" : " (live)"}`, [
            {name: "p50", label: "p50", points: acked.map((s) => [s.second, s.ack_p50_us])},
            {name: "p99", label: "p99", points: acked.map((s) => [s.second, s.ack_p99_us])},
          ], ticks, [first, Math.max(last, first + 1)], {label: "ACKs/s", points: seconds.map((s) => [s.second, s.acks])});
        }

        """#
}
