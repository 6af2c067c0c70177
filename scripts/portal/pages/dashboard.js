// The instructor's dashboard: the live grid from /portal/api/events (a stream read with fetch, so
// the token goes in a header, never a URL), the broadcast, "End workshop", and a read-only view
// of a seat's terminal. The token arrives in the link's fragment and stays in this tab only.
const KEY = 'dplab.portal.instructor';
const fromLink = new URLSearchParams(location.hash.slice(1)).get('token');
if (fromLink) {
  sessionStorage.setItem(KEY, fromLink);
  history.replaceState(null, '', location.pathname);
}
const token = sessionStorage.getItem(KEY);
const $ = (id) => document.getElementById(id);
const auth = { authorization: `Bearer ${token}` };
let state;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, v);
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

function ago(ms) {
  if (!ms) return '';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? `${s} s ago` : `${Math.floor(s / 60)} min ago`;
}

const LABEL = { passed: 'passed', failing: 'failing', 'not-started': 'not started' };

function render() {
  if (!state) return;
  $('lab').textContent =
    `${state.lab.title} · ${state.seats.length} seat${state.seats.length === 1 ? '' : 's'}${state.ending ? ' · ending…' : ''}${state.ended ? ' · ended' : ''}`;
  $('code').textContent = state.code;
  $('join-url').textContent = state.joinUrl;
  $('end').disabled = state.ended || state.ending;
  const head = $('grid').tHead;
  head.replaceChildren(
    el(
      'tr',
      {},
      el('th', {}, 'Seat'),
      el('th', {}, 'Learner'),
      el('th', {}, 'Seat state'),
      el('th', {}, 'Clusters'),
      ...state.lab.steps.map((s, i) => el('th', { title: s.title }, `${i + 1}. ${s.title}`)),
      el('th', {}, 'Stuck?'),
      el('th', {}, ''),
    ),
  );
  const body = $('grid').tBodies[0];
  body.replaceChildren(
    ...state.seats.map((seat) => {
      const clusters =
        seat.clusters
          .filter((c) => c.state !== 'absent')
          .map((c) => `${c.mode}: ${c.state}`)
          .join(', ') || 'none';
      const watch = el('button', { type: 'button', class: 'secondary', 'data-watch': seat.id }, 'Watch');
      watch.disabled = seat.phase !== 'ready';
      const remove = el(
        'button',
        { type: 'button', class: 'secondary', 'data-remove': seat.id, 'aria-label': `Remove seat ${seat.id}` },
        'Remove',
      );
      return el(
        'tr',
        { 'data-seat': seat.id, 'data-stuck': seat.stuck ? '' : undefined },
        el('td', {}, seat.id),
        el(
          'td',
          {},
          seat.learner ?? el('span', { class: 'muted' }, 'free'),
          seat.lastActiveAt ? el('span', { class: 'muted', style: 'display:block;font-size:.78rem' }, ago(seat.lastActiveAt)) : undefined,
        ),
        el(
          'td',
          {},
          el('span', { class: 'phase', 'data-phase': seat.phase }, seat.phase),
          seat.message ? el('span', { class: 'muted', style: 'display:block;font-size:.78rem' }, seat.message) : undefined,
        ),
        el('td', {}, clusters),
        ...seat.steps.map((c) =>
          el(
            'td',
            { 'data-step': c.step },
            el('span', { class: 'cell', 'data-status': c.status }, LABEL[c.status] + (c.failStreak > 1 ? ` ×${c.failStreak}` : '')),
            c.message ? el('span', { class: 'why' }, c.message.replace(/`/g, '')) : undefined,
          ),
        ),
        el('td', { class: 'stuck' }, seat.stuck ?? ''),
        el('td', {}, watch, ' ', remove),
      );
    }),
  );
}

async function listen() {
  for (;;) {
    try {
      const res = await fetch('/portal/api/events', { headers: auth, credentials: 'omit' });
      if (res.status === 401 || res.status === 403) {
        $('error').textContent = 'This link’s instructor token is not this portal’s. Open the dashboard link `dplab portal` printed.';
        return;
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      $('error').textContent = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (data) {
            state = JSON.parse(data);
            render();
          }
        }
      }
    } catch {
      $('error').textContent = 'Lost the portal; reconnecting…';
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function post(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
    credentials: 'omit',
  });
  if (!res.ok) $('error').textContent = (await res.json().catch(() => ({})))?.error?.message ?? `The portal answered ${res.status}.`;
  return res;
}

$('broadcast').addEventListener('submit', (e) => {
  e.preventDefault();
  void post('/portal/api/broadcast', { message: e.target.message.value });
});
$('end').addEventListener('click', async () => {
  if (!confirm('End the workshop? Every seat’s clusters are deleted and every seat is closed.')) return;
  $('end').disabled = true;
  await post('/portal/api/end');
});

// A read-only view of a seat's terminal (the seat runner's watch socket: its latest shell, with a replay of
// the screen so far): output only, nothing typed here is sent.
let socket;
// Escape sequences (CSI, OSC, charset and keypad switches) built from ESC and BEL, so the
// pattern itself holds no control characters.
const ESC = String.fromCharCode(27);
const BEL = String.fromCharCode(7);
const ANSI = new RegExp(`${ESC}\\[[0-?]*[ -/]*[@-~]|${ESC}\\][^${BEL}${ESC}]*(${BEL}|${ESC}\\\\)|${ESC}[()][A-Za-z0-9]|${ESC}[=>]`, 'g');
function stripAnsi(text) {
  return text.replace(ANSI, '').replace(/\r\n/g, '\n').replace(/\r/g, '');
}
function watch(id) {
  socket?.close();
  $('watch').hidden = false;
  $('watch-title').textContent = `Seat ${id}: terminal (read-only)`;
  const screen = $('watch-screen');
  screen.textContent = '';
  const url = new URL(`/portal/api/seats/${encodeURIComponent(id)}/watch?cols=100&rows=30`, location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  socket = new WebSocket(url, ['dplab.v1', `dplab.token.${token}`]);
  socket.binaryType = 'arraybuffer';
  const decoder = new TextDecoder();
  socket.onmessage = (m) => {
    if (typeof m.data === 'string') {
      try {
        const msg = JSON.parse(m.data);
        // A new screen starts (the seat opened another shell): its replay follows.
        if (msg.type === 'mirror') screen.textContent = msg.terminal ? '' : '[This seat has no terminal open.]\n';
        if (msg.type === 'error' || msg.type === 'notice') screen.textContent += `\n[${msg.message}]\n`;
      } catch {
        // not a control frame
      }
      return;
    }
    screen.textContent = (screen.textContent + stripAnsi(decoder.decode(m.data, { stream: true }))).slice(-20000);
    screen.scrollTop = screen.scrollHeight;
  };
  socket.onclose = (e) => (screen.textContent += `\n[closed${e.reason ? `: ${e.reason}` : ''}]`);
}
$('grid').addEventListener('click', async (e) => {
  const id = e.target.closest('[data-watch]')?.getAttribute('data-watch');
  if (id) watch(id);
  const gone = e.target.closest('[data-remove]')?.getAttribute('data-remove');
  if (!gone || !confirm(`Remove seat ${gone}? Its learner's link stops working and its clusters are deleted.`)) return;
  const res = await fetch(`/portal/api/seats/${encodeURIComponent(gone)}`, { method: 'DELETE', headers: auth, credentials: 'omit' });
  if (!res.ok) $('error').textContent = (await res.json().catch(() => ({})))?.error?.message ?? `The portal answered ${res.status}.`;
});
$('watch-close').addEventListener('click', () => {
  socket?.close();
  $('watch').hidden = true;
});

if (!token) $('error').textContent = 'Open the dashboard with the link `dplab portal` printed (it carries the instructor token).';
else void listen();
setInterval(render, 15000);
