// Loaded by every course page the portal serves: the instructor's broadcast message and the
// seat's state, in a small banner. Reads the learner token the join page stored; does nothing
// for a page without one (or on a runner that is not a portal: its /portal/api/me is a 401/404).
(() => {
  // The page's runner is a seat's: its "not reachable" messages name the instructor, not
  // `npm start` (SEAT_PAGE_ATTRIBUTE in site/client/runner-api.ts).
  document.documentElement.setAttribute('data-dplab-seat', '');
  const POLL_MS = 3000;
  const token = localStorage.getItem('dplab.token');
  if (!token) return;
  let banner;
  let wasPending = false;
  const show = (text) => {
    if (!text) {
      banner?.remove();
      banner = undefined;
      return;
    }
    if (!banner) {
      banner = document.createElement('div');
      banner.id = 'dplab-portal-banner';
      banner.setAttribute('role', 'status');
      banner.style.cssText =
        'position:fixed;right:1rem;bottom:1rem;z-index:1000;max-width:28rem;padding:.75rem 1rem;border-radius:8px;background:#2457c5;color:#fff;font:15px/1.4 system-ui,sans-serif;box-shadow:0 6px 24px rgb(0 0 0 / .25)';
      document.body.append(banner);
    }
    banner.textContent = text;
  };
  const poll = async () => {
    try {
      const res = await fetch('/portal/api/me', { headers: { authorization: `Bearer ${token}` }, credentials: 'omit' });
      if (res.status === 401 || res.status === 404) return;
      if (res.ok) {
        const me = await res.json();
        // A page opened while the seat was still starting found no runner: once the seat is
        // ready, load it again so its terminal and checks connect.
        if (me.phase === 'pending') wasPending = true;
        else if (wasPending && me.phase === 'ready') return location.reload();
        if (me.ended) show('The workshop has ended. Thank you!');
        else if (me.phase === 'pending') show(me.broadcast ? `📣 ${me.broadcast}` : `Your seat is being prepared: ${me.message ?? ''}`);
        else show(me.broadcast ? `📣 ${me.broadcast}` : '');
      }
    } catch {
      // the portal is restarting; try again
    }
    setTimeout(poll, POLL_MS);
  };
  poll();
})();
