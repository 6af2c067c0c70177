// Dataplane Lab: the runner's link carries its token in the fragment (#token=…), which the
// browser never sends anywhere. Keep it in this origin's own storage and take it out of the
// address bar before anything else runs. Read by site/client/runner-auth.ts (same key).
(function () {
  function capture() {
    var match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (!match) return false;
    var token = decodeURIComponent(match[1]);
    try {
      localStorage.setItem('dplab.token', token);
    } catch (e) {
      try {
        sessionStorage.setItem('dplab.token', token);
      } catch (e2) {
        // no storage at all: the page will say it has no token
      }
    }
    var rest = location.hash
      .slice(1)
      .split('&')
      .filter(function (part) {
        return part.indexOf('token=') !== 0;
      })
      .join('&');
    history.replaceState(history.state, '', location.pathname + location.search + (rest ? '#' + rest : ''));
    return true;
  }
  capture();
  // A new link opened over this very page only changes the fragment, so the page does not
  // load again: take the token and reload, so terminals and panels start with it.
  addEventListener('hashchange', function () {
    if (capture()) location.reload();
  });
})();
