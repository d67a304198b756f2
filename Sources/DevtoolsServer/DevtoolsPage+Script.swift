extension DevtoolsPage {
    /// The page's script: its WebSocket, the panels it draws (nodes, stores, the action stream, time
    /// travel, dispatch, session files; latency in ``latencyScript``) and the requests each makes.
    static let script = mainScript + latencyScript

    static let mainScript = #"""
        "use strict";
        const $ = (id) => document.getElementById(id);
        // The token that dispatch, time travel and export carry, from the address's #token=…; read again
        // when only the part after # changes (pasting the printed address into an open tab does not
        // reload it). The tab keeps it (sessionStorage), so a reload without the #token=… still has it.
        const tokenKey = "zflux-devtools-token";
        const tokenFromAddress = () => {
          const given = new URLSearchParams(location.hash.slice(1)).get("token") || "";
          try { if (given) sessionStorage.setItem(tokenKey, given); return given || sessionStorage.getItem(tokenKey) || ""; }
          catch (error) { return given; }
        };
        let token = tokenFromAddress();
        window.addEventListener("hashchange", () => { token = tokenFromAddress(); showTokenNeed(true); });
        let socket = null, nextId = 1;
        const waiting = new Map();
        const stores = {};          // name -> {app, version, connection, state, changed}
        const closed = new Set();   // "store path" of collapsed subtrees
        let actions = [];           // newest last
        let welcomeHead = 0;        // the newest seq of the actions the welcome brought (from before the page opened)
        let catalog = [], head = 0, first = 0, following = true, hello = null;
        // The binary that serves the page (a team's own, not always `zflux`): what its commands are run as.
        const programName = () => (hello && hello.program) || "zflux";

        function element(tag, attributes, ...children) {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
          for (const child of children) node.append(child);
          return node;
        }
        const text = (value) => JSON.stringify(value);

        function connect() {
          socket = new WebSocket(`ws://${location.host}/ws`);
          socket.onopen = () => { $("conn").textContent = "live"; $("conn").className = "good"; request({op: "range"}); };
          socket.onclose = () => {
            delete document.body.dataset.ready;
            $("conn").textContent = "disconnected: retrying"; $("conn").className = "bad";
            for (const answer of waiting.values()) answer({kind: "error", message: "the connection closed"});
            waiting.clear();
            setTimeout(connect, 1000);
          };
          socket.onmessage = (event) => receive(JSON.parse(event.data));
        }

        function request(body) {
          body.id = nextId++;
          return new Promise((answer) => {
            waiting.set(body.id, answer);
            socket.send(JSON.stringify(body));
          });
        }

        function receive(message) {
          if (message.id && waiting.has(message.id)) {
            const answer = waiting.get(message.id);
            waiting.delete(message.id);
            return answer(message);
          }
          switch (message.kind) {
            case "hello": return greet(message);
            case "state": return showState(message);
            case "nodes": return showNodes(message);
            case "actions": return addActions(message);
            case "range": return setRange(message);
            case "bench": return addBenchLines(message);
            // The welcome's last message: everything the server held when the page joined is drawn, which
            // a script (a headless screenshot, a test) waits for: document.body.dataset.ready === "1".
            case "welcomed":
              welcomeHead = actions.length ? actions[actions.length - 1].seq : 0;
              renderStream();
              document.body.dataset.ready = "1";
              return;
          }
        }

        // Says before anyone tries that a dispatch (or time travel, an export) would be refused: a token is
        // needed and the address has none.
        // `pasted`: the address changed, so whatever was said of the token before (a refusal too) is old.
        function showTokenNeed(pasted) {
          if (!hello || !hello.tokenRequired) return;
          const result = $("dispatch-result");
          if (!token) {
            result.className = "bad";
            result.textContent = "this devtools needs a token to dispatch, travel in time and export: open the address it printed, with its #token=…";
            result.dataset.tokenNote = "1";
          } else if (result.dataset.tokenNote || pasted) {
            result.className = "dim";
            result.textContent = "a token is in the address now";
            delete result.dataset.tokenNote;
          }
        }

        // The hello: stores, the catalog of the apps this binary hosts, and what needs a token. The form
        // offers the apps the cluster's stores run: a hosted app no store runs has nobody to apply it.
        function greet(message) {
          hello = message;
          showTokenNeed(false);
          catalog = message.apps || [];
          $("program").textContent = `${message.program} · ${message.runDirectory}`;
          for (const name of document.querySelectorAll(".program")) name.textContent = message.program;
          const apps = [...new Set(message.stores.map((store) => store.app))];
          const hosted = catalog.map((app) => app.name);
          $("dispatch-apps").textContent = apps.some((name) => hosted.includes(name)) ? ""
            : `this cluster runs none of the apps ${message.program} hosts (${hosted.join(", ") || "none"})`
              + (apps.length ? ": its payloads go as JSON, for the dispatcher to judge" : "");
          $("dispatch-send").disabled = !apps.length;
          const select = $("dispatch-app");
          select.replaceChildren(...apps.map((name) => element("option", {value: name}, name)));
          select.onchange = chooseApp;
          $("dispatch-type").onchange = chooseType;
          chooseApp();
          for (const store of message.stores) stores[store.name] = stores[store.name] || {app: store.app, version: 0, connection: "joining", state: null, changed: new Set()};
          renderStores();
        }

        function chooseApp() {
          const app = catalog.find((app) => app.name === $("dispatch-app").value);
          const types = app ? app.actions.filter((action) => action.origin !== "effect") : [];
          $("dispatch-types").replaceChildren(...types.map((action) => element("option", {value: action.type}, action.summary)));
          $("dispatch-type").value = types.length ? types[0].type : "";
          chooseType();
        }

        function chooseType() {
          const app = catalog.find((app) => app.name === $("dispatch-app").value);
          const action = app && app.actions.find((action) => action.type === $("dispatch-type").value);
          $("dispatch-args").value = action ? action.example : "{}";
          $("dispatch-summary").textContent = action ? action.summary : (app ? "" : "an app this binary does not host: the dispatcher judges the payload");
        }

        async function dispatch(event) {
          event.preventDefault();
          const result = $("dispatch-result");
          result.className = "dim";
          result.textContent = "dispatching…";
          const answer = await request({op: "dispatch", app: $("dispatch-app").value, type: $("dispatch-type").value,
                                        arguments: $("dispatch-args").value, token});
          outcome = null;
          $("dispatch-outcome").textContent = "";
          if (answer.outcome === "ack") {
            result.className = "good"; result.textContent = `ACK: seq ${answer.seq}`;
            const app = $("dispatch-app").value;
            outcome = {seq: answer.seq, app, stores: Object.keys(stores).filter((name) => stores[name].app === app), asked: false};
            followOutcome();
          }
          else if (answer.outcome === "nack") { result.className = "bad"; result.textContent = `NACK: ${answer.reason}`; }
          else { result.className = "bad"; result.textContent = `${answer.outcome || "error"}: ${answer.reason || answer.message}`; }
        }

        // What became of the action acknowledged last, after its ACK, as far as the page can tell: a store
        // refused it (its reducer, or it skipped it as quarantined: the action stream says so), or every
        // store of its app is current through its seq. A skip said while the store recovered from the
        // crash can be missed, so "current through" is checked against the journal (time travel says
        // whether the seq is quarantined) before it is called applied.
        let outcome = null;
        function followOutcome() {
          if (!outcome) return;
          const shown = $("dispatch-outcome"), seq = outcome.seq;
          const program = programName();
          const quarantined = (store) => `seq ${seq} was not applied: it crashed the reducer of ${store || "its stores"} and is quarantined;`
            + ` every store skips it (${program} quarantine list; ${program} quarantine release ${seq} once the reducer is fixed)`;
          if (outcome.refusal) {
            shown.className = "bad";
            shown.textContent = outcome.refusal.quarantined ? quarantined(outcome.refusal.store)
              : `seq ${seq} was refused by store ${outcome.refusal.store}: ${outcome.refusal.reason}`;
            outcome.done = true;
            return;
          }
          if (outcome.done) return;
          const behind = outcome.stores.filter((name) => !(stores[name] && stores[name].version >= seq));
          if (behind.length) {
            shown.className = "dim";
            shown.textContent = `waiting for ${behind.join(", ")} to apply seq ${seq}…`;
            return;
          }
          if (outcome.asked) return;
          outcome.asked = true;
          const asked = outcome;
          request({op: "at", seq, token}).then((answer) => {
            if (asked !== outcome || outcome.refusal) return;
            outcome.done = true;
            if (answer.quarantined) { shown.className = "bad"; shown.textContent = quarantined(null); }
            else if (answer.error) { shown.className = "dim"; shown.textContent = `every store of ${asked.app} is current through seq ${seq} (${answer.error})`; }
            else { shown.className = "good"; shown.textContent = `applied: every store of ${asked.app} is current through seq ${seq}`; }
          });
        }

        // Nodes, as `zflux top` shows them.
        function showNodes(message) {
          const rows = message.rows.map((row) => element("tr", {class: row[row.length - 1] === "not answering" ? "bad" : ""},
            ...row.map((cell) => element("td", {}, cell))));
          $("nodes").replaceChildren(element("tr", {}, ...message.header.map((title) => element("th", {}, title))), ...rows);
          // The page is connected to devtools, but is the cluster? Said when no node answers.
          const down = message.rows.length > 0 && message.rows.every((row) => row[row.length - 1] === "not answering");
          if (socket && socket.readyState === WebSocket.OPEN) {
            $("conn").textContent = down ? "live · no node of the cluster answers" : "live";
            $("conn").className = down ? "bad" : "good";
          }
          if (message.head > head) setHead(message.head);
        }

        // Paths whose values differ between two states: `todos[0].title`; "" is the whole state.
        function changedPaths(a, b, path, out) {
          if (text(a) === text(b)) return out;
          const container = (v) => v !== null && typeof v === "object";
          if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length && a.length * b.length <= 40000) {
            // A list that grew or shrank: as the diff lines below, matched in order by their text, so
            // an item put in at the top is the one marked, not every item after it.
            for (const [step, , j] of sequenceSteps(a, b)) {
              if (step === "add") out.add(child(path, j, true));
              else if (step === "drop") out.add(path);
            }
          } else if (container(a) && container(b) && Array.isArray(a) === Array.isArray(b)) {
            const keys = Array.isArray(a) ? [...Array(Math.max(a.length, b.length)).keys()] : [...new Set(Object.keys(a).concat(Object.keys(b)))];
            for (const key of keys) changedPaths(a[key], b[key], child(path, key, Array.isArray(a)), out);
          } else out.add(path);
          return out;
        }
        // The steps from list `a` to list `b` that keep the most items in order (matched by their text):
        // ["keep", i, j], ["drop", i, j] (a[i] goes) or ["add", i, j] (b[j] comes).
        function sequenceSteps(a, b) {
          const at = a.map(text), bt = b.map(text), steps = [];
          const keep = Array.from({length: a.length + 1}, () => new Array(b.length + 1).fill(0));
          for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) {
            keep[i][j] = at[i] === bt[j] ? keep[i + 1][j + 1] + 1 : Math.max(keep[i + 1][j], keep[i][j + 1]);
          }
          let i = 0, j = 0;
          while (i < a.length || j < b.length) {
            if (i < a.length && j < b.length && at[i] === bt[j]) { steps.push(["keep", i, j]); i++; j++; }
            else if (j < b.length && (i === a.length || keep[i][j + 1] >= keep[i + 1][j])) { steps.push(["add", i, j]); j++; }
            else { steps.push(["drop", i, j]); i++; }
          }
          return steps;
        }
        const child = (path, key, indexed) => indexed ? `${path}[${key}]` : (path ? `${path}.${key}` : String(key));

        function diffLines(a, b, path, out) {
          if (text(a) === text(b)) return out;
          const container = (v) => v !== null && typeof v === "object";
          if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length && a.length * b.length <= 40000) {
            // A list that grew or shrank: a sequence diff (items kept in order match by their text), so
            // an item put in at the top is one "+" line, not a change of every item after it.
            for (const [step, i, j] of sequenceSteps(a, b)) {
              if (step === "add") out.push(["good", `+ ${child(path, j, true)}: ${text(b[j])}`]);
              else if (step === "drop") out.push(["bad", `- ${child(path, i, true)}: ${text(a[i])}`]);
            }
          } else if (container(a) && container(b) && Array.isArray(a) === Array.isArray(b)) {
            const keys = Array.isArray(a) ? [...Array(Math.max(a.length, b.length)).keys()] : [...new Set(Object.keys(a).concat(Object.keys(b)))].sort();
            for (const key of keys) {
              const next = child(path, key, Array.isArray(a));
              if (a[key] === undefined) out.push(["good", `+ ${next}: ${text(b[key])}`]);
              else if (b[key] === undefined) out.push(["bad", `- ${next}: ${text(a[key])}`]);
              else diffLines(a[key], b[key], next, out);
            }
          } else out.push(["changed", `~ ${path || "(state)"}: ${text(a)} → ${text(b)}`]);
          return out;
        }

        // A state as a collapsible tree; changed paths (and what holds them) highlighted.
        function tree(store, key, value, path, changed) {
          // On a changed path, inside one (a new item), or holding one.
          const under = (inner, outer) => outer === "" || inner.startsWith(outer + ".") || inner.startsWith(outer + "[");
          const hit = [...changed].some((p) => p === path || under(p, path) || under(path, p));
          const mark = changed.size && hit ? " changed" : "";
          if (value !== null && typeof value === "object") {
            const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
            const summary = element("summary", {class: mark.trim()}, `${key} ${Array.isArray(value) ? `[${value.length}]` : `{${entries.length}}`}`);
            const node = element("details", {"data-path": path}, summary,
              ...entries.map(([k, v]) => tree(store, Array.isArray(value) ? `[${k}]` : k, v, child(path, k, Array.isArray(value)), changed)));
            node.open = !closed.has(`${store} ${path}`);
            node.addEventListener("toggle", () => node.open ? closed.delete(`${store} ${path}`) : closed.add(`${store} ${path}`));
            return node;
          }
          return element("div", {class: "leaf" + mark, "data-path": path}, `${key}: ${text(value)}`);
        }

        function showState(message) {
          const store = stores[message.store] || (stores[message.store] = {app: "", changed: new Set()});
          // A heartbeat's update (same state, later version) keeps the last change highlighted.
          if (store.state === null || store.state === undefined) store.changed = new Set();
          else if (text(store.state) !== text(message.state)) store.changed = changedPaths(store.state, message.state, "", new Set());
          Object.assign(store, {version: message.version, connection: message.connection, state: message.state});
          renderStores();
          followOutcome();
        }

        function renderStores() {
          $("stores").replaceChildren(...Object.keys(stores).sort().map((name) => {
            const store = stores[name];
            const title = element("h3", {}, `${name} `, element("span", {class: store.connection === "live" ? "dim" : "bad"},
              `${store.app} · version ${store.version} · ${store.connection}`));
            return element("div", {class: "store", "data-store": name, "data-version": String(store.version)}, title,
              store.state === null ? element("div", {class: "dim"}, "no state yet") : tree(name, "state", store.state, "", store.changed));
          }));
        }

        // The action stream, newest first, filtered by app and type: only the actions this page got (the
        // newest it keeps), which the count says, so nobody takes it for a search of the whole journal.
        function addActions(message) {
          actions = actions.concat(message.actions).slice(-1000);
          for (const action of message.actions) {
            if (action.seq > head) setHead(action.seq);
            if (outcome && action.rejected_by && action.seq === outcome.seq && !outcome.refusal) {
              outcome.refusal = {store: action.rejected_by, reason: action.reason, quarantined: !!action.quarantined};
            }
          }
          followOutcome();
          renderStream();
        }

        function renderStream() {
          const app = $("filter-app").value.toLowerCase(), type = $("filter-type").value.toLowerCase();
          const shown = actions.filter((a) => (!app || (a.app || a.rejected_by || "").toLowerCase().includes(app)) && (!type || (a.type || "").toLowerCase().includes(type)));
          // The server's newest when the page joined (from before it opened), then every one since.
          const older = actions.filter((a) => a.seq <= welcomeHead).length;
          $("stream-count").textContent = `${shown.length} of the ${actions.length} newest actions`
            + (actions.length ? ` (seq ${actions[0].seq} on${older ? `, ${older} of them from before this page opened` : ""})` : "")
            + (shown.length > 300 ? ", the newest 300 listed" : "");
          $("stream").replaceChildren(...shown.slice(-300).reverse().map((a) => {
            const line = a.rejected_by
              ? element("li", {class: "bad", "data-seq": a.seq}, `${a.seq}  rejected by ${a.rejected_by}: ${a.type}: ${a.reason}`)
              : element("li", {"data-seq": a.seq}, `${a.seq}  ${a.time.slice(11, 23)}  ${a.app}.${a.type}  ${text(a.payload)}`);
            if (a.seq === chosenSeq) line.classList.add("chosen");
            line.onclick = () => travelTo(a.seq, true);
            return line;
          }));
        }

        // Time travel: every store's state at a seq, beside its diff against the seq before.
        function setRange(message) {
          if (message.error) { $("travel").replaceChildren(element("div", {class: "dim"}, message.error)); return; }
          first = Math.max(message.first - 1, 0);   // one before the journal's first: the state before it
          $("slider").min = String(first);
          if (message.head > head) setHead(message.head);
        }

        function setHead(seq) {
          head = seq;
          $("slider").max = String(head);
          if (following) $("slider").value = String(head);
          if (following) $("travel-seq").textContent = `head ${head} (move the slider to travel)`;
        }

        // The seq time travel shows (null: it follows the head), its line in the stream highlighted.
        let travelling = 0, chosenSeq = null;
        function choose(seq) {
          chosenSeq = seq;
          for (const line of $("stream").children) line.classList.toggle("chosen", Number(line.dataset.seq) === seq);
        }

        // `reveal`: a click in the stream, which may be far from the panel: its result is scrolled to.
        async function travelTo(seq, reveal) {
          following = false;
          choose(seq);
          $("travel-goto-result").textContent = "";
          $("slider").value = String(seq);
          $("travel-seq").textContent = `seq ${seq}…`;
          const ticket = ++travelling;
          const answer = await request({op: "at", seq, token});
          if (ticket !== travelling) return;
          showTravel(answer);
          if (!reveal) return;
          $("travel-section").scrollTop = 0;
          $("travel-section").scrollIntoView({block: "nearest"});
        }

        // "go to seq", as `g` in `zflux view --history`: exactly the seq typed, which the slider is too
        // coarse to hit in a long journal; one outside the journal goes to its nearer end, and says so.
        function goToSeq(event) {
          event.preventDefault();
          const typed = $("travel-goto-seq").value.trim(), wanted = Number(typed), note = $("travel-goto-result");
          if (!typed || !Number.isInteger(wanted)) {
            note.className = "bad";
            note.textContent = "a seq is a whole number";
            return;
          }
          const seq = Math.min(Math.max(wanted, first), head);
          travelTo(seq);
          note.className = seq === wanted ? "dim" : "bad";
          note.textContent = seq === wanted ? ""
            : `seq ${wanted} is outside the journal (seqs ${first + 1}…${head}; ${first}: the state before them): at seq ${seq} instead`;
        }

        function showTravel(answer) {
          if (answer.kind === "error" || answer.error) {
            $("travel-seq").textContent = `seq ${answer.seq || $("slider").value}`;
            $("travel").replaceChildren(element("div", {class: "bad"}, answer.error || answer.message));
            return;
          }
          $("travel-seq").textContent = `seq ${answer.seq}`;
          const action = answer.action
            ? element("div", {class: "action"}, `seq ${answer.action.seq} · ${answer.action.app}.${answer.action.type} ${text(answer.action.payload)} · ${answer.action.time}`
                + (answer.quarantined ? " · quarantined: every store skips it (zflux quarantine list)" : ""))
            : element("div", {class: "dim"}, "before the first action");
          const views = answer.stores.map((store) => {
            const lines = diffLines(store.previous, store.state, "", []);
            const diff = element("div", {class: "diff"}, ...(lines.length ? lines.map(([cls, line]) => element("div", {class: cls}, line)) : [element("div", {class: "dim"}, "no change")]));
            return element("div", {class: "store", "data-store": store.name, "data-seq": String(answer.seq)},
              element("h3", {}, `${store.name} as of seq ${answer.seq}`), diff,
              tree(`travel:${store.name}`, "state", store.state, "", changedPaths(store.previous, store.state, "", new Set())));
          });
          const unhosted = (answer.unhosted || []).map((name) => element("div", {class: "dim"}, `${name}: its app is not hosted by this binary, so its past states are not rebuilt here`));
          $("travel").replaceChildren(action, ...views, ...unhosted);
        }

        let sliderTimer = null;
        function slid() {
          following = Number($("slider").value) >= head;
          clearTimeout(sliderTimer);
          sliderTimer = setTimeout(() => travelTo(Number($("slider").value)), 120);
        }

        // Session files, as `zflux journal export` writes them: exported from the journal by the server,
        // and opened here, in the page alone, to step through their actions and the states they left.
        let exportedURL = null, exportedBody = null;
        async function exportSession() {
          const from = Number($("session-from").value || 1), to = Number($("session-to").value || head);
          $("session-result").className = "dim";
          $("session-result").textContent = `exporting seqs ${from}…${to}…`;
          const answer = await request({op: "export", from, to, token});
          if (answer.kind !== "exported" || answer.error || !answer.session) {
            $("session-result").className = "bad";
            $("session-result").textContent = answer.error || answer.message || "the export failed";
            return;
          }
          if (exportedURL) URL.revokeObjectURL(exportedURL);
          // The file's bytes as the server wrote them (parsing would round 64-bit numbers); parsed only to show it.
          const body = answer.session, parsed = JSON.parse(body);
          exportedBody = body;
          exportedURL = URL.createObjectURL(new Blob([body], {type: "application/json"}));
          const link = $("session-download");
          link.href = exportedURL;
          link.download = `zflux-${answer.from}-${answer.to}.session`;
          link.hidden = false;
          $("session-result").className = "good";
          $("session-result").textContent = `${parsed.actions.length} actions, ${parsed.stores.length} stores, ${body.length} bytes`;
          openSession(parsed, link.download);
        }

        let session = null;
        function openSession(file, name) {
          if (!file || !Array.isArray(file.actions) || !Array.isArray(file.stores)) {
            forgetSession();
            $("session-summary").className = "bad";
            $("session-summary").textContent = `${name}: not a session file (no actions and stores)`;
            return;
          }
          session = file;
          $("session-summary").className = "dim";
          $("session-summary").textContent = `${name}: seqs ${file.from}…${file.to}, ${file.stores.length} stores. Replay it in a cluster: ${hello ? hello.program : "zflux"} journal import ${name} --run-dir DIR`;
          $("session-actions").replaceChildren(element("li", {"data-index": "-1"}, `before ${file.from}: the stores' states`),
            ...file.actions.map((a, index) => element("li", {"data-index": String(index), "data-seq": String(a.seq)},
              `${a.seq}  ${a.app}.${a.type}  ${text(a.payload)}${scheduled(a)}`)));
          for (const line of $("session-actions").children) line.onclick = () => showSessionAt(Number(line.dataset.index));
          showSessionAt(-1);
        }

        // A fired schedule's mark: when it was due, and how late it fired.
        function scheduled(action) {
          if (!action.scheduled) return "";
          const late = (action.time_ns - action.scheduled.due_ns) / 1e6;
          return `  (scheduled by seq ${action.scheduled.request_seq}${late > 1000 ? `, ${(late / 1000).toFixed(1)} s late` : ""})`;
        }

        // Every store's state after the action at `index` (-1: before the first), and the diff it made.
        function showSessionAt(index) {
          const states = {}, before = {};
          for (const store of session.stores) states[store.name] = store.state;
          for (let i = 0; i <= index; i++) {
            if (i === index) Object.assign(before, states);
            Object.assign(states, session.actions[i].changed || {});
          }
          for (const line of $("session-actions").children) line.classList.toggle("chosen", Number(line.dataset.index) === index);
          const action = index >= 0 ? session.actions[index] : null;
          const views = session.stores.map((store) => {
            const previous = index >= 0 ? before[store.name] : store.state, state = states[store.name];
            const lines = diffLines(previous, state, "", []);
            return element("div", {class: "store", "data-store": store.name},
              element("h3", {}, `${store.name} (${store.app}) ${action ? `after seq ${action.seq}` : `at version ${store.version}`}`),
              element("div", {class: "diff"}, ...(lines.length ? lines.map(([cls, line]) => element("div", {class: cls}, line)) : [element("div", {class: "dim"}, "no change")])),
              tree(`session:${store.name}`, "state", state, "", changedPaths(previous, state, "", new Set())));
          });
          const title = action
            ? element("div", {class: "action"}, `seq ${action.seq} · ${action.app}.${action.type} ${text(action.payload)} · ${action.time}`)
            : element("div", {class: "dim"}, `the states the session starts from`);
          $("session-view").replaceChildren(title, ...views);
        }

        // What a failed export or open must not leave behind as if it were its result: the link to the
        // export before, the session opened before.
        function forgetExport() {
          const link = $("session-download");
          link.hidden = true;
          link.removeAttribute("href");
          if (exportedURL) URL.revokeObjectURL(exportedURL);
          exportedURL = null;
        }
        function forgetSession() {
          session = null;
          $("session-actions").replaceChildren();
          $("session-view").replaceChildren();
        }

        function readSessionFile() {
          const file = $("session-file").files[0];
          if (!file) return;
          file.text().then((body) => {
            let parsed = null;
            try { parsed = JSON.parse(body); } catch (error) {
              forgetSession();
              $("session-summary").className = "bad";
              $("session-summary").textContent = `${file.name}: not JSON (${error.message})`;
              return;
            }
            openSession(parsed, file.name);
          });
        }

        window.addEventListener("DOMContentLoaded", () => {
          $("bench-file").addEventListener("change", readBenchFile);
          drawBenchLive();
          // Each export starts by dropping the link to the one before: a failed one leaves none.
          $("session-export").addEventListener("click", forgetExport);
          $("session-export").addEventListener("click", exportSession);
          $("session-file").addEventListener("change", readSessionFile);
          $("dispatch-form").addEventListener("submit", dispatch);
          $("filter-app").addEventListener("input", renderStream);
          $("filter-type").addEventListener("input", renderStream);
          $("slider").addEventListener("input", slid);
          $("travel-live").addEventListener("click", () => { following = true; choose(null); $("travel").replaceChildren(); setHead(head); });
          $("travel-goto").addEventListener("submit", goToSeq);
          connect();
        });
        """#
}
