/// The devtools page: one HTML file, its script and its style, served by zflux itself (no build
/// step, nothing fetched from elsewhere: a cluster may run where nothing can be fetched).
///
/// Element ids the tests drive are part of the page's contract: `conn`, `nodes`, `stream`,
/// `filter-app`, `filter-type`, `stream-count`, `stream-scope`, `stores`, `slider`, `travel-seq`,
/// `travel-goto-seq`, `travel-goto-send`, `travel-goto-result`, `travel-section`, `travel`, `dispatch-app`,
/// `dispatch-type`, `dispatch-args`, `dispatch-send`, `dispatch-result`, `dispatch-outcome`, `session-from`, `session-to`,
/// `session-export`, `session-download`, `session-result`, `session-file`, `session-actions`,
/// `session-view`, `bench-file`, `bench-summary`, `bench-percentiles`, `bench-histogram`, `bench-timeline`, `bench-live`,
/// `bench-live-status`, `dispatch-apps`.
enum DevtoolsPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>zflux devtools</title>
        <link rel="stylesheet" href="/devtools.css">
        <script src="/devtools.js" defer></script>
        </head>
        <body>
        <header><h1>zflux devtools</h1> <span id="program"></span> <span id="conn" class="bad">connecting</span></header>
        <main>
        <section id="cluster"><h2>Nodes</h2><table id="nodes"></table></section>
        <section id="dispatch"><h2>Dispatch</h2>
          <form id="dispatch-form">
            <label>app <select id="dispatch-app"></select></label> <span id="dispatch-apps" class="dim"></span>
            <label>action <input id="dispatch-type" list="dispatch-types" autocomplete="off"></label>
            <datalist id="dispatch-types"></datalist>
            <label class="wide">arguments (JSON) <textarea id="dispatch-args" rows="2" spellcheck="false">{}</textarea></label>
            <button id="dispatch-send" type="submit">dispatch</button>
            <span id="dispatch-summary" class="dim"></span>
          </form>
          <div id="dispatch-result"></div>
          <div id="dispatch-outcome" class="dim"></div>
        </section>
        <section id="state-section"><h2>Stores, live</h2><div id="stores"></div></section>
        <section id="stream-section"><h2>Actions, live</h2>
          <div class="filters">
            <input id="filter-app" placeholder="filter by app"> <input id="filter-type" placeholder="filter by type">
            <span id="stream-count" class="dim"></span>
            <div id="stream-scope" class="dim">the filter searches only these, not the whole journal; for an older seq,
              "go to seq" under Time travel</div>
          </div>
          <ol id="stream"></ol>
        </section>
        <section id="travel-section"><h2>Time travel</h2>
          <div class="filters">
            <input id="slider" type="range" min="0" max="0" value="0" step="1">
            <span id="travel-seq" class="dim">no seq yet</span>
            <button id="travel-live" type="button">follow the head</button>
          </div>
          <form id="travel-goto" class="filters">
            <label>go to seq <input id="travel-goto-seq" type="number" min="0" step="1"></label>
            <button id="travel-goto-send" type="submit">go</button>
            <span id="travel-goto-result" class="dim"></span>
          </form>
          <div id="travel"></div>
        </section>
        <section id="session-section"><h2>Session files</h2>
          <div class="filters">
            export seqs <input id="session-from" type="number" min="1" size="8"> to <input id="session-to" type="number" min="1" size="8">
            <button id="session-export" type="button">export</button>
            <a id="session-download" hidden>save the session file</a>
            <span id="session-result" class="dim"></span>
          </div>
          <div class="filters">open a session file <input id="session-file" type="file" accept=".session,.json,application/json">
            <span id="session-summary" class="dim"></span></div>
          <div class="split"><ol id="session-actions"></ol><div id="session-view"></div></div>
        </section>
        <section id="bench-section"><h2>Latency</h2>
          <div class="filters">open a bench report (<code><span class="program">zflux</span> bench --json &gt; report.json</code>)
            <input id="bench-file" type="file" accept=".json,application/json">
            or run <code><span class="program">zflux</span> bench --attach</code> against this cluster to follow it here
            (live: ACK latency; the report's e2e when the run ends)</div>
          <div id="bench-live-status" class="dim">no bench --attach run seen</div>
          <div id="bench-summary" class="dim">no report open</div>
          <div class="split"><svg id="bench-live" viewBox="0 0 480 260"></svg><svg id="bench-percentiles" viewBox="0 0 480 260"></svg><svg id="bench-histogram" viewBox="0 0 480 260"></svg><svg id="bench-timeline" viewBox="0 0 480 260"></svg></div>
        </section>
        </main>
        </body>
        </html>
        """#

    static let style = #"""
        :root { color-scheme: light dark; --changed: #fd4; --good: #2a7; --bad: #c33; --dim: #888; }
        body { font: 13px/1.4 ui-monospace, monospace; margin: 0; }
        header { padding: 6px 12px; border-bottom: 1px solid var(--dim); }
        h1 { display: inline; font-size: 15px; } h2 { font-size: 13px; margin: 4px 0; }
        main { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; padding: 8px; grid-template-areas:
          "nodes nodes" "stores dispatch" "stores stream" "travel travel" "session session" "bench bench"; }
        section { border: 1px solid var(--dim); border-radius: 4px; padding: 6px; overflow: auto; max-height: 45vh; }
        /* The nodes table across the page, every column in sight; the stores beside the dispatch form and
           the stream, as tall as the two (a height of 0 so that a long state scrolls, not stretches them). */
        #cluster { grid-area: nodes; max-height: none; } #dispatch { grid-area: dispatch; max-height: none; }
        #state-section { grid-area: stores; height: 0; min-height: 100%; max-height: none; box-sizing: border-box; }
        #stream-section { grid-area: stream; min-height: 30vh; } #travel-section { grid-area: travel; max-height: 70vh; }
        #session-section { grid-area: session; } #bench-section { grid-area: bench; }
        #travel { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 12px; }
        #travel > :not(.store) { grid-column: 1 / -1; }
        table { border-collapse: collapse; } td, th { padding: 1px 8px 1px 0; text-align: left; white-space: nowrap; }
        .bad { color: var(--bad); } .good { color: var(--good); } .dim { color: var(--dim); }
        .changed { background: var(--changed); color: #000; }
        details { margin-left: 12px; } summary { cursor: pointer; } .leaf { margin-left: 24px; }
        .store { margin-bottom: 8px; } .store h3 { font-size: 13px; margin: 2px 0; }
        #stream { list-style: none; padding: 0; margin: 0; } #stream li { cursor: pointer; white-space: nowrap; }
        #stream li:hover { text-decoration: underline; } #stream li.chosen { background: var(--changed); color: #000; }
        .filters { margin-bottom: 4px; } #slider { width: 60%; vertical-align: middle; }
        form label { margin-right: 8px; } form .wide { display: block; margin: 4px 0; }
        textarea { width: 100%; font: inherit; box-sizing: border-box; }
        .diff { margin: 2px 0 2px 12px; white-space: pre-wrap; }
        #session-section, #bench-section { max-height: none; }
        #bench-section .split { grid-template-columns: 1fr 1fr; } svg { width: 100%; height: auto; }
        svg text { fill: currentColor; font: 10px ui-monospace, monospace; } svg .axis { stroke: var(--dim); }
        svg .p50 { stroke: var(--good); fill: none; stroke-width: 1.5; } svg .p99 { stroke: var(--bad); fill: none; stroke-width: 1.5; }
        svg .rate { stroke: var(--dim); fill: none; stroke-dasharray: 3 2; } svg text.rate { stroke: none; fill: var(--dim); }
        svg rect.bar { fill: var(--good); opacity: 0.8; }
        svg text.p50 { stroke: none; fill: var(--good); } svg text.p99 { stroke: none; fill: var(--bad); }
        .split { display: grid; grid-template-columns: 1fr 2fr; gap: 8px; }
        #session-actions { list-style: none; padding: 0; margin: 0; max-height: 40vh; overflow: auto; }
        #session-actions li { cursor: pointer; white-space: nowrap; } #session-actions li.chosen { background: var(--changed); color: #000; }
        input[type=number] { width: 8em; font: inherit; }
        """#
}
