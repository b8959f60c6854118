/* What the face (face.js) and the admin page (admin/admin.js) share about the web door: the
 * token a `fay-ros web` link carries, and where the rosbridge endpoint is.
 *
 * The token arrives once, in the link's fragment (#token=...), which a browser never sends to
 * any server. It is kept in the storage the page chooses (the face: localStorage, so it
 * reopens without the link; the admin page: this tab's sessionStorage) and taken out of the
 * address bar.
 */
(function () {
  'use strict';

  function token(storage, key) {
    const fromLink = new URLSearchParams(location.hash.replace(/^#/, '')).get('token');
    if (fromLink) {
      try { storage().setItem(key, fromLink); } catch (e) { /* storage off: this visit only */ }
      history.replaceState(null, '', location.pathname + location.search);
      return fromLink;
    }
    try { return storage().getItem(key) || ''; } catch (e) { return ''; }
  }

  // The rosbridge websocket on this page's host (an IPv6 literal in brackets), at the port
  // /config.json names; `?rosbridge=ws://...` on the page's address overrides it.
  function rosbridgeUrl(config) {
    const override = new URLSearchParams(location.search).get('rosbridge');
    if (override) return override;
    const host = location.hostname || 'localhost';
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const bracketed = host.includes(':') && !host.startsWith('[') ? '[' + host + ']' : host;
    return scheme + '://' + bracketed + ':' + (config.rosbridge_port || 9090);
  }

  window.fayDoor = { token, rosbridgeUrl };
})();
