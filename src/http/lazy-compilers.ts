// Fastify compiles every route's validators (Ajv) and response serializers (fast-json-stringify) while the app
// starts: most of a start's CPU once the code itself is compiled. These are Fastify's own compiler factories, with the
// options Fastify passes them, wrapped so that a route's function is compiled on its first use instead. Guarantees:
// - validation and serialisation are exactly the default ones (same compilers, same options, same errors);
// - start-up compiles nothing; the first request of a route (and status) compiles once and keeps the result;
// - `compileAll()` compiles everything still pending, so a schema that cannot compile fails a test, not a request.
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Serialize = (data: unknown) => string;
type Builder<Route, Fn> = (externalSchemas: unknown, options: unknown) => (route: Route) => Fn;

export type LazyCompilers = {
  buildValidator: Builder<unknown, Validate>;
  buildSerializer: Builder<unknown, Serialize>;
  /** Compiles every route function not compiled yet; throws the first compile error. */
  compileAll(): void;
};

export function lazyCompilers(): LazyCompilers {
  const pending = new Set<() => unknown>();

  /** A factory whose compiler and each route's function are built when first called. */
  function lazy<Fn>(factory: Builder<unknown, Fn>, wrap: (get: () => Fn) => Fn): Builder<unknown, Fn> {
    return (externalSchemas, options) => {
      let compiler: ((route: unknown) => Fn) | undefined;
      return (route) => {
        let fn: Fn | undefined;
        const get = (): Fn => {
          if (fn === undefined) {
            fn = (compiler ??= factory(externalSchemas, options))(route);
            pending.delete(get);
          }
          return fn;
        };
        pending.add(get);
        return wrap(get);
      };
    };
  }

  const validators = (AjvCompiler as unknown as () => Builder<unknown, Validate>)();
  const serializers = (SerializerSelector as unknown as () => Builder<unknown, Serialize>)();
  return {
    buildValidator: lazy(validators, (get) => {
      const validate: Validate = (data) => get()(data);
      // Fastify reads the errors off the function it called.
      Object.defineProperty(validate, 'errors', { get: () => get().errors });
      return validate;
    }),
    buildSerializer: lazy(serializers, (get) => (data) => get()(data)),
    compileAll() {
      for (const get of [...pending]) get();
    },
  };
}
