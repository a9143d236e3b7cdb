import FoundationEssentials
import HealthModel
import WorkoutPresentation
import GatewayRuntime

/// The board's page, stylesheet and script, and the history pages: everything the browser needs
/// ships in the binary (no CDN, no build step, no framework).
enum BoardAssets {
    static let boardPage = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>healthgate live board</title>
        <link rel="stylesheet" href="board.css">
        </head>
        <body class="board">
        <header>
          <h1>healthgate <span>live board</span></h1>
          <nav><span id="connection" class="connecting">connecting…</span> <a id="history-link" href="history">history</a></nav>
        </header>
        <main id="tiles" aria-live="polite"></main>
        <p id="empty">Waiting for heart-rate monitors…</p>
        <dialog id="sign-in">
          <form method="dialog" id="sign-in-form">
            <h2>Sign in <span id="sign-in-strap"></span></h2>
            <p id="sign-in-radio"></p>
            <label>Participant <input id="sign-in-name" name="participant" list="participant-names" required maxlength="64"
              autocomplete="off" placeholder="a participant, or a new member's name"></label>
            <datalist id="participant-names"></datalist>
            <label class="keep"><input type="checkbox" id="sign-in-keep"> keep this strap after the class</label>
            <p id="sign-in-error" role="alert"></p>
            <menu><button type="button" id="sign-in-cancel">Cancel</button> <button type="submit" id="sign-in-submit">Sign in</button></menu>
          </form>
        </dialog>
        <script src="board.js"></script>
        </body>
        </html>
        """

    static let stylesheet = """
        :root { --z0: #5b6472; --z1: #8a97a8; --z2: #2f80ed; --z3: #27ae60; --z4: #f2994a; --z5: #eb5757; }
        * { box-sizing: border-box; }
        body { margin: 0; font-family: system-ui, sans-serif; background: #101418; color: #f4f6f8; }
        header { display: flex; justify-content: space-between; align-items: baseline; padding: 12px 20px; }
        h1 { margin: 0; font-size: 22px; } h1 span { color: #8a97a8; font-weight: normal; }
        nav a { color: #8ab4f8; margin-left: 12px; }
        #connection.live { color: #27ae60; } #connection.connecting { color: #f2994a; }
        main { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 14px; padding: 0 20px 20px; }
        /* The live board fills the screen: the script sets --columns and --rows from the tile
           count (6 × 5 for 30 on a 1920 × 1080 screen) and every size in a tile follows the
           tile's own content box (container units; so the tile's padding is in px), so nothing overflows at 10, 20 or 30 tiles. */
        body.board { height: 100vh; display: flex; flex-direction: column; overflow: hidden; }
        body.board header { flex: none; padding: 8px 20px; }
        body.board main { flex: 1; min-height: 0; gap: 10px; padding: 0 12px 12px;
          grid-template-columns: repeat(var(--columns, 4), minmax(0, 1fr)); grid-template-rows: repeat(var(--rows, 2), minmax(0, 1fr)); }
        .tile { border-radius: 12px; background: var(--z0); transition: background .4s; position: relative; overflow: hidden;
                container-type: size; display: flex; flex-direction: column; padding: 8px 12px 0; min-width: 0; min-height: 0; }
        .tile[data-zone="1"] { background: var(--z1); } .tile[data-zone="2"] { background: var(--z2); }
        .tile[data-zone="3"] { background: var(--z3); } .tile[data-zone="4"] { background: var(--z4); }
        .tile[data-zone="5"] { background: var(--z5); }
        .tile.lost { background: #3a3f46; outline: 3px dashed #eb5757; outline-offset: -3px; }
        .head { display: flex; align-items: center; gap: 3cqw; min-width: 0; }
        .name { flex: 1; min-width: 0; font-size: min(15cqh, 10cqw); font-weight: 600; line-height: 1.15; white-space: nowrap;
                overflow: hidden; text-overflow: ellipsis; }
        .guest .name { font-style: italic; }
        /* A new strap: nobody wears it yet; its identity and radio, and the button that signs it in. */
        .tile.strap { background: #1f3b57; outline: 3px solid #8ab4f8; outline-offset: -3px; }
        .tile.strap.lost { background: #3a3f46; outline: 3px dashed #eb5757; }
        .sign-in { flex: none; font: inherit; font-size: min(11cqh, 7cqw); font-weight: 700; padding: .1em .6em; border-radius: 6px;
                   border: 0; background: #8ab4f8; color: #101418; cursor: pointer; }
        .tile:not(.strap) .sign-in { display: none; }
        /* The identity whole (it is what `participant assign` takes), the radio on the line below. */
        .tile.strap .figures { flex-direction: column; gap: 1cqh; }
        .strap-id { font-variant-numeric: tabular-nums; font-weight: 600; }
        dialog { background: #1b2128; color: #f4f6f8; border: 1px solid #8ab4f8; border-radius: 12px; min-width: 420px; }
        dialog h2 { margin: 0 0 4px; font-size: 20px; } dialog label { display: block; margin: 10px 0; }
        dialog input[type=text], dialog input:not([type]) { display: block; width: 100%; font: inherit; padding: 6px; margin-top: 4px; }
        dialog menu { display: flex; justify-content: flex-end; gap: 8px; padding: 0; }
        dialog button { font: inherit; padding: 4px 14px; }
        #sign-in-error { color: #eb5757; min-height: 1.2em; }
        .hr { display: flex; align-items: baseline; gap: 2cqw; white-space: nowrap; overflow: hidden; line-height: 1; margin-top: 2cqh; }
        /* Sized for three digits (0.7 em each) and "102 % max" on one line: a class's heart rates
           pass 100 (the demo's ANT+ class showed them clipped at 20 and 30 tiles). */
        .bpm { font-size: min(44cqh, 22cqw); font-weight: 700; font-variant-numeric: tabular-nums; }
        .hr small { font-size: min(10cqh, 5cqw); }
        .percent { font-size: min(14cqh, 6cqw); font-weight: 600; }
        .figures { display: flex; gap: 5cqw; font-size: min(11cqh, 6.5cqw); white-space: nowrap; overflow: hidden; margin-top: 2cqh; }
        .badge { display: none; flex: none; background: #eb5757; color: #fff;
                 border-radius: 6px; padding: 0 .4em; font-size: min(11cqh, 7cqw); font-weight: 700; }
        .tile.lost .badge { display: block; }
        svg.trend { position: absolute; left: 0; bottom: 0; width: 100%; height: 16cqh; pointer-events: none; }
        svg.trend polyline { fill: none; stroke: #fff; stroke-width: 2; opacity: .6; }
        #empty { padding: 0 20px; color: #8a97a8; }
        table { border-collapse: collapse; margin: 0 20px; } td, th { padding: 6px 12px; text-align: left; border-bottom: 1px solid #2a3038; }
        .chart { background: #fff; margin: 0 20px; padding: 8px; border-radius: 8px; max-width: 1000px; }
        .note { margin: 0 20px; color: #8a97a8; }
        """

    /// The page's script: an EventSource on /events (the browser reconnects by itself after the
    /// `retry` the server sends), tiles made once and updated in place.
    static let script = """
        'use strict';
        const token = new URLSearchParams(location.search).get('token');
        const suffix = token ? '?token=' + encodeURIComponent(token) : '';
        document.getElementById('history-link').href = 'history' + suffix;
        const tiles = document.getElementById('tiles');
        const connection = document.getElementById('connection');
        const made = new Map();

        function minutes(seconds) {
          if (seconds == null) return '–';
          const s = Math.floor(seconds);
          return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
        }

        function element(tag, className, parent) {
          const node = document.createElement(tag);
          if (className) node.className = className;
          parent.appendChild(node);
          return node;
        }

        function makeTile(id) {
          const tile = element('section', 'tile', tiles);
          tile.dataset.tileId = id;
          tile.innerHTML = '<div class="head"><span class="name"></span><span class="badge">LOST</span>' +
            '<button type="button" class="sign-in">Sign in</button></div>' +
            '<div class="hr"><span class="bpm">–</span><small>bpm</small><span class="percent"></span></div>' +
            '<div class="figures"><span class="zone"></span><span class="in-zone"></span><span class="energy"></span></div>' +
            '<svg class="trend" viewBox="0 0 60 40" preserveAspectRatio="none"><polyline points=""></polyline></svg>';
          tile.querySelector('.sign-in').addEventListener('click', () => openSignIn(tile.strap));
          made.set(id, tile);
          return tile;
        }

        function trendPoints(values) {
          if (values.length < 2) return '';
          const low = Math.min(...values) - 2, high = Math.max(...values) + 2;
          const step = 60 / (values.length - 1);
          return values.map((v, i) => (i * step).toFixed(1) + ',' + (40 - (v - low) / (high - low) * 40).toFixed(1)).join(' ');
        }

        function renderTile(t) {
          const tile = made.get(t.id) || makeTile(t.id);
          tile.classList.toggle('guest', t.guest);
          tile.classList.toggle('lost', t.sensor === 'lost');
          tile.dataset.sensor = t.sensor;
          tile.dataset.zone = t.zone == null ? '0' : String(t.zone);
          tile.dataset.heartRate = t.heartRate == null ? '' : String(Math.round(t.heartRate));
          tile.querySelector('.name').textContent = t.name;
          tile.querySelector('.bpm').textContent = t.heartRate == null ? '–' : Math.round(t.heartRate);
          tile.querySelector('.percent').textContent = t.percentOfMaximum == null ? '' : Math.round(t.percentOfMaximum) + ' % max';
          tile.classList.toggle('strap', !!t.strap);
          tile.strap = t.strap || null;
          if (t.strap) {
            // A new strap: its identity (as `participant assign` takes it) and the radio it came by.
            tile.dataset.strap = t.strap.identity;
            tile.querySelector('.zone').textContent = t.strap.identity;
            tile.querySelector('.zone').className = 'zone strap-id';
            tile.querySelector('.in-zone').textContent = radios[t.strap.radio] || 'no radio';
            tile.querySelector('.energy').textContent = '';
          } else {
            tile.querySelector('.zone').textContent = t.zone == null ? 'no zone' : 'zone ' + t.zone;
            tile.querySelector('.in-zone').textContent = t.secondsInZone == null ? '' : minutes(t.secondsInZone) + ' in zone';
            tile.querySelector('.energy').textContent = t.energyKilocalories == null ? '' : Math.round(t.energyKilocalories) + ' kcal';
          }
          tile.querySelector('polyline').setAttribute('points', trendPoints(t.trend));
        }

        // Columns and rows for `count` tiles on a landscape screen: 6 × 5 for 30, 5 × 4 for 20,
        // 4 × 3 for 10; at least 2 rows, so that a few tiles do not fill the screen alone.
        function layout(count) {
          const columns = count <= 2 ? 2 : count <= 6 ? 3 : count <= 12 ? 4 : count <= 20 ? 5 : count <= 30 ? 6 : Math.ceil(Math.sqrt(count * 1.4));
          const rows = Math.max(2, Math.ceil(count / columns));
          tiles.style.setProperty('--columns', columns);
          tiles.style.setProperty('--rows', rows);
        }

        // An event is the whole board (`full`: every tile, in order) or the tiles that changed,
        // the ids of the tiles gone and, when it changed, the new order.
        function render(update) {
          for (const t of update.tiles) renderTile(t);
          const gone = update.full ? [...made.keys()].filter((id) => !update.order.includes(id)) : update.removed;
          for (const id of gone) {
            const tile = made.get(id);
            if (tile) { tile.remove(); made.delete(id); }
          }
          if (update.order) {
            for (const id of update.order) { const tile = made.get(id); if (tile) tiles.appendChild(tile); }
          }
          layout(made.size);
          document.getElementById('empty').style.display = made.size ? 'none' : 'block';
          document.body.dataset.updated = update.generatedAt;
        }

        const radios = { antPlus: 'ANT+', bluetoothBroadcast: 'Bluetooth broadcast', bluetoothConnection: 'Bluetooth connection' };

        // Signing a new strap in: a participant's name (or a new member's), posted as JSON to
        // the board's own address; the gateway assigns it as `participant assign` does.
        const dialog = document.getElementById('sign-in');
        const nameInput = document.getElementById('sign-in-name');
        const signInError = document.getElementById('sign-in-error');
        let signingIn = null;
        function openSignIn(strap) {
          if (!strap) return;
          signingIn = strap;
          document.getElementById('sign-in-strap').textContent = strap.identity;
          document.getElementById('sign-in-radio').textContent = (radios[strap.radio] || 'no radio') + (strap.deviceName ? ' · ' + strap.deviceName : '');
          const names = document.getElementById('participant-names');
          names.replaceChildren(...[...made.values()].filter((t) => !t.strap).map((t) => {
            const option = document.createElement('option');
            option.value = t.querySelector('.name').textContent;
            return option;
          }));
          nameInput.value = '';
          document.getElementById('sign-in-keep').checked = false;
          signInError.textContent = '';
          dialog.showModal();
          nameInput.focus();
        }
        document.getElementById('sign-in-cancel').addEventListener('click', () => dialog.close());
        document.getElementById('sign-in-form').addEventListener('submit', async (event) => {
          event.preventDefault();
          if (!signingIn) return;
          const body = { strap: signingIn.identity, participant: nameInput.value.trim(), keep: document.getElementById('sign-in-keep').checked };
          try {
            const response = await fetch('api/sign-in' + suffix, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
            const answer = await response.json().catch(() => ({}));
            if (!response.ok) { signInError.textContent = answer.error || ('refused: ' + response.status); return; }
            document.body.dataset.signedIn = answer.participant;
            dialog.close();
          } catch (error) {
            signInError.textContent = 'the gateway did not answer: ' + error;
          }
        });

        const events = new EventSource('events' + suffix);
        events.onopen = () => { connection.textContent = 'live'; connection.className = 'live'; document.body.dataset.connected = 'true'; };
        events.onerror = () => { connection.textContent = 'reconnecting…'; connection.className = 'connecting'; document.body.dataset.connected = 'false'; };
        events.onmessage = (message) => render(JSON.parse(message.data));
        """

    static func historyPage(rows: [Workout], note: String?) -> String {
        let body = rows.map { workout -> String in
            let participant = BoardRouter.participant(of: workout) ?? "–"
            let average = workout.statistics.first { $0.type == .heartRate }?.average.map { String(Int($0.rounded())) } ?? "–"
            let minutes = Int(workout.duration) / 60, seconds = Int(workout.duration) % 60
            return "<tr><td><a href=\"history/\(workout.id)\">\(escapeMarkup(RFC3339.string(from: workout.startDate)))</a></td>"
                + "<td>\(escapeMarkup(participant))</td><td>\(escapeMarkup(workout.activityType.rawValue))</td>"
                + "<td>\(minutes):\(String(cFormat: "%02ld", seconds))</td><td>\(average)</td></tr>"
        }.joined(separator: "\n")
        return page(title: "history", content: """
            \(note.map { "<p class=\"note\">\(escapeMarkup($0))</p>" } ?? "")
            <table id="workouts"><thead><tr><th>start</th><th>participant</th><th>activity</th><th>duration</th><th>avg HR</th></tr></thead>
            <tbody>\(body)</tbody></table>
            """)
    }

    static func chartPage(workout: Workout, participant: String?, svg: String) -> String {
        page(title: "workout", content: """
            <p class="note">\(escapeMarkup(participant ?? "")) \(escapeMarkup(workout.activityType.rawValue)), \
            \(escapeMarkup(RFC3339.string(from: workout.startDate))) · <a href="\(workout.id).svg">SVG</a></p>
            <div class="chart">\(svg)</div>
            """)
    }

    private static func page(title: String, content: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>healthgate \(title)</title>
        <base href="/"><link rel="stylesheet" href="board.css"></head>
        <body><header><h1>healthgate <span>\(title)</span></h1><nav><a href="/" id="board-link">live board</a></nav></header>
        \(content)
        <script>
        const token = new URLSearchParams(location.search).get('token');
        if (token) for (const a of document.querySelectorAll('a')) a.href += (a.href.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token);
        </script>
        </body></html>
        """
    }
}
