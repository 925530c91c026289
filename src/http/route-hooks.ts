// Hooks that only some routes need are added to those routes when they are registered (an `onRoute` hook), so
// every other request pays nothing for them, not even a check of its route's config.
import type { RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preParsing' | 'preHandler';

/** Puts `hook` in front of the route's own hooks of that kind (hooks of the app and its plugins still run first). */
export function prependRouteHook<N extends HookName>(route: RouteOptions, name: N, hook: unknown): void {
  const own = route[name] as unknown;
  (route as unknown as Record<HookName, unknown[]>)[name] = own === undefined ? [hook] : [hook, ...[own].flat()];
}
