// Preloaded with `node --require` (NODE_OPTIONS) so that a server which listens on every
// interface, with no option to say otherwise (server-everything's HTTP modes), binds to
// 127.0.0.1 only: tests never open a port to the network.
'use strict';
const net = require('net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback])
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
    else args[1] = '127.0.0.1';
  } else if (first && typeof first === 'object' && !('path' in first)) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
