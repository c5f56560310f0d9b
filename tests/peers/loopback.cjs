// Preloaded with `node --require` (NODE_OPTIONS) so that a server which listens on every
// interface, with no option to say otherwise (server-everything's HTTP modes, the conformance
// suite's scenario servers), binds to 127.0.0.1 only: tests never open a port to the network.
// With LOOPBACK_REPORT_PORT set, each server says on stderr which port it got, so a test can
// start it on port 0 and read the port back.
'use strict';
const dns = require('dns');
const net = require('net');

const LOOPBACK = '127.0.0.1';

// Node binds `listen(port)` at once but `listen(port, host)` only after looking the host up,
// so code that reads `server.address()` right after `listen(0)` would find nothing. Answer the
// lookup of our own loopback address at once, and the bind stays immediate.
const lookup = dns.lookup;
dns.lookup = function (hostname, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  if (hostname === LOOPBACK && typeof done === 'function') {
    if (options && options.all) done(null, [{ address: LOOPBACK, family: 4 }]);
    else done(null, LOOPBACK, 4);
    return {};
  }
  return lookup.apply(this, arguments);
};

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback])
    if (typeof args[1] !== 'string') args.splice(1, 0, LOOPBACK);
    else args[1] = LOOPBACK;
  } else if (first === undefined || typeof first === 'function') {
    // listen([callback]): a random port
    args.unshift(0, LOOPBACK);
  } else if (first && typeof first === 'object' && !('path' in first) && !('fd' in first) && !('handle' in first) && !('_handle' in first)) {
    args[0] = { ...first, host: LOOPBACK };
  }
  if (process.env.LOOPBACK_REPORT_PORT) {
    // A test gives port 0 and reads the port back from here: no probe-then-bind race.
    this.once('listening', () => {
      const address = this.address();
      if (address && typeof address === 'object') {
        process.stderr.write(`loopback: listening on ${LOOPBACK}:${address.port}\n`);
      }
    });
  }
  return listen.apply(this, args);
};
