// The join page: code + name → a seat and a learner token, kept where the course's pages look
// for their runner token (localStorage 'dplab.token', as site/client/runner-auth.ts reads it).
const TOKEN_KEY = 'dplab.token';
const form = document.getElementById('join');
const error = document.getElementById('error');
const progress = document.getElementById('progress');
const fromFragment = new URLSearchParams(location.hash.slice(1)).get('code');
if (fromFragment) {
  form.code.value = fromFragment;
  history.replaceState(null, '', location.pathname);
}

// Back on this page with a seat already: offer the way back to it.
const known = localStorage.getItem(TOKEN_KEY);
if (known) {
  fetch('/portal/api/me', { headers: { authorization: `Bearer ${known}` }, credentials: 'omit' })
    .then((r) => (r.ok ? r.json() : null))
    .then((me) => {
      if (!me || me.ended) return;
      const again = document.getElementById('again');
      again.textContent = `You already have seat ${me.seat} as ${me.name}. `;
      const link = document.createElement('a');
      link.href = '/';
      link.textContent = 'Back to your seat';
      again.append(link);
      again.hidden = false;
    })
    .catch(() => undefined);
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  error.textContent = '';
  const button = form.querySelector('button');
  button.disabled = true;
  button.textContent = 'Finding your seat…';
  try {
    const res = await fetch('/portal/api/join', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: form.code.value, name: form.name.value }),
      credentials: 'omit',
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body?.error?.message ?? `The portal answered ${res.status}.`);
    localStorage.setItem(TOKEN_KEY, body.token);
    button.textContent = 'Preparing your seat…';
    await seatReady(body.token);
    location.assign(body.start);
  } catch (err) {
    progress.textContent = '';
    error.textContent = err instanceof Error ? err.message : String(err);
    button.disabled = false;
    button.textContent = 'Take my seat';
  }
});

// A seat can take a while (a pod to schedule and start on a cluster): the learner waits here,
// seeing what it waits for, not on a lab page whose runner does not answer yet.
async function seatReady(token) {
  for (;;) {
    const res = await fetch('/portal/api/me', { headers: { authorization: `Bearer ${token}` }, credentials: 'omit' }).catch(() => null);
    const me = res?.ok ? await res.json().catch(() => null) : null;
    if (me?.ended) throw new Error('The workshop has ended.');
    if (me?.phase === 'ready') return;
    if (me?.phase === 'failed' || me?.phase === 'deleted')
      throw new Error(`Your seat could not start${me.message ? `: ${me.message}` : '.'} Tell the instructor.`);
    if (res && (res.status === 401 || res.status === 404)) throw new Error('This seat is gone; join again.');
    progress.textContent = me?.message ? `Preparing your seat: ${me.message}` : 'Preparing your seat…';
    await new Promise((r) => setTimeout(r, 1000));
  }
}
