// Guarantee: the text sent is exactly what the route's response schema serialises for the value's view, built once
// per value and kept only as long as the value is (WeakMap). A value that an exact cache shares while, and only
// while, it is current therefore makes the text exact too.
import type { FastifyReply } from 'fastify';

/** A sender for one route: `send(reply, value, view)` answers 200 with `view()` serialised once per `value`. */
export function serialiseOnce(): (reply: FastifyReply, value: object, view: () => unknown) => FastifyReply {
  const texts = new WeakMap<object, string | Buffer | ArrayBuffer>();
  return (reply, value, view) => {
    let text = texts.get(value);
    if (text === undefined) texts.set(value, (text = reply.serialize(view())));
    // A string payload skips the serialiser; the type is the one Fastify gives serialised JSON.
    return reply.type('application/json; charset=utf-8').send(text);
  };
}
