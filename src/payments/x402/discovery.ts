import { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import type { RouteConfig } from '@hono/zod-openapi';
import {
  declareDiscoveryExtension,
  type BodyDiscoveryExtension,
  type DiscoveryExtension,
  type QueryDiscoveryExtension,
} from '@x402/extensions/bazaar';

/**
 * x402's discovery metadata (the `bazaar` extension of @x402/extensions) for a paid route: how to
 * call it and what it answers, so discovery services can list it (issue 30). The schemas are the
 * route's OpenAPI ones, produced by the same generator from the same zod schemas the route validates
 * with, component references inlined; the examples are derived from those schemas.
 */
export type DiscoveryExtensions = Readonly<Record<string, DiscoveryExtension>>;

type JsonSchema = Record<string, unknown>;
type Method = 'GET' | 'POST';

/** What an OpenAPI operation says of a call: its query, path and JSON body schemas and its success body's. */
export interface OperationSchemas {
  query?: ObjectSchema;
  path?: ObjectSchema;
  body?: JsonSchema;
  output?: JsonSchema;
}

interface ObjectSchema {
  properties: Record<string, JsonSchema>;
  required: string[];
}

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: JsonSchema;
}

interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

/**
 * A paid route's discovery extension, built once when the route is defined. discovery.test.ts checks
 * every paid route's with @x402/extensions' validator (not done here: its Ajv warns on the console
 * of every OpenAPI format it does not know).
 */
export function routeDiscovery(route: RouteConfig): DiscoveryExtensions {
  const { middleware: _middleware, hide: _hide, ...spec } = route;
  const registry = new OpenAPIRegistry();
  registry.registerPath(spec);
  const document = new OpenApiGeneratorV3(registry.definitions).generateDocument({ openapi: '3.0.3', info: { title: route.path, version: '1' } });
  const method = route.method.toUpperCase() as Method;
  return { bazaar: discoveryExtension(method, route.path, operationSchemas(document, method, route.path)) };
}

/** The operation's schemas in an OpenAPI document, `$ref`s to its components inlined (a discovery schema stands alone). */
export function operationSchemas(document: object, method: string, path: string): OperationSchemas {
  const doc = document as { paths?: Record<string, Record<string, OpenApiOperation>>; components?: { schemas?: Record<string, JsonSchema> } };
  const operation = doc.paths?.[path]?.[method.toLowerCase()];
  if (!operation) throw new Error(`the OpenAPI document has no ${method} ${path}`);
  const inline = (node: unknown) => inlineRefs(node, doc.components?.schemas ?? {}) as JsonSchema;
  const params = (where: string): ObjectSchema | undefined => {
    const list = (operation.parameters ?? []).filter((p) => p.in === where);
    if (list.length === 0) return undefined;
    return {
      properties: Object.fromEntries(list.map((p) => [p.name, inline(p.schema ?? {})])),
      required: list.filter((p) => p.required).map((p) => p.name),
    };
  };
  const body = operation.requestBody?.content?.['application/json']?.schema;
  const success = Object.entries(operation.responses ?? {}).find(([status]) => /^2\d\d$/.test(status))?.[1];
  const output = success?.content?.['application/json']?.schema;
  const query = params('query');
  const pathParams = params('path');
  return {
    ...(query && { query }),
    ...(pathParams && { path: pathParams }),
    ...(body && { body: inline(body) }),
    ...(output && { output: inline(output) }),
  };
}

function inlineRefs(node: unknown, components: Record<string, JsonSchema>, seen: readonly string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, components, seen));
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const name = ref.replace('#/components/schemas/', '');
    const target = components[name];
    if (!target || seen.includes(name)) throw new Error(`cannot inline the schema reference ${ref}`);
    return inlineRefs(target, components, [...seen, name]);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineRefs(value, components, seen)]));
}

/** The bazaar extension for these schemas, method and examples included (no per-request enrichment needed for them). */
function discoveryExtension(method: Method, path: string, schemas: OperationSchemas): DiscoveryExtension {
  const pathParams = schemas.path && { pathParams: exampleOf({ type: 'object', ...schemas.path }) as JsonSchema, pathParamsSchema: { ...schemas.path } };
  const output = schemas.output && { output: { example: exampleOf(schemas.output), schema: schemas.output } };
  const declared =
    method === 'GET'
      ? declareDiscoveryExtension({
          input: schemas.query ? (exampleOf({ type: 'object', ...schemas.query }) as JsonSchema) : {},
          inputSchema: schemas.query ? { ...schemas.query } : { properties: {} },
          ...pathParams,
          ...output,
        })
      : declareDiscoveryExtension({
          bodyType: 'json',
          input: schemas.body ? (exampleOf(schemas.body) as JsonSchema) : {},
          inputSchema: schemas.body ?? { type: 'object' },
          ...pathParams,
          ...output,
        });
  const extension = declared.bazaar as QueryDiscoveryExtension | BodyDiscoveryExtension;
  // As @x402/extensions' bazaarResourceServerExtension fills it in per request: the method, in the info and its schema.
  (extension.info.input as { method?: Method }).method = method;
  const input = (extension.schema.properties as { input: { properties: Record<string, unknown> } }).input;
  input.properties.method = { type: 'string', enum: [method] };
  // Listed under its template rather than each id's URL (bazaar's `/:param` form).
  if (schemas.path) extension.routeTemplate = path.replaceAll(/\{(\w+)\}/g, ':$1');
  return extension;
}

const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2026-01-01T00:00:00.000Z',
  date: '2026-01-01',
  uri: 'https://example.com',
  url: 'https://example.com',
  email: 'agent@example.com',
};

/**
 * A value the schema accepts, for discovery's examples: the schema's own `example` where it has one,
 * else the smallest plausible value (required properties only, no array items beyond `minItems`).
 */
export function exampleOf(schema: JsonSchema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum.find((value) => value !== null);
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0 && !schema.type) return exampleOf(options[0] as JsonSchema);
  }
  switch (schema.type) {
    case 'object':
      return objectExample(schema);
    case 'array':
      return Array.from({ length: Number(schema.minItems ?? 0) }, () => exampleOf((schema.items ?? {}) as JsonSchema));
    case 'string':
      return stringExample(schema);
    case 'integer':
    case 'number':
      return numberExample(schema);
    case 'boolean':
      return true;
    default:
      return {};
  }
}

function objectExample(schema: JsonSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  return Object.fromEntries(required.filter((name) => properties[name]).map((name) => [name, exampleOf(properties[name] as JsonSchema)]));
}

function stringExample(schema: JsonSchema): string {
  if (typeof schema.pattern === 'string') return patternExample(schema.pattern);
  const formatted = typeof schema.format === 'string' ? FORMAT_EXAMPLES[schema.format] : undefined;
  if (formatted) return formatted;
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  return 'string'.padEnd(min, 'x').slice(0, max);
}

function numberExample(schema: JsonSchema): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum + (schema.exclusiveMinimum === true ? 1 : 0) : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum - (schema.exclusiveMaximum === true ? 1 : 0) : undefined;
  return min ?? (max !== undefined && max < 1 ? max : 1);
}

/**
 * The shortest string a simple regular expression matches: anchors, literals, escapes (\d \w \s
 * \xHH), classes (their first character), groups (their first alternative) and quantifiers (their
 * minimum count). The caller validates the result against the schema, so a pattern beyond this
 * fails when the route is defined, not in a client.
 */
export function patternExample(pattern: string): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const [atom, next] = readAtom(pattern, i);
    const [count, after] = readQuantifier(pattern, next);
    out += atom.repeat(count);
    i = after;
  }
  return out;
}

function readAtom(pattern: string, i: number): [string, number] {
  const c = pattern[i] as string;
  if (c === '^' || c === '$') return ['', i + 1];
  if (c === '\\') return readEscape(pattern, i);
  if (c === '.') return ['a', i + 1];
  if (c === '[') {
    if (pattern[i + 1] === '^') throw new Error(`no example for the negated class in /${pattern}/`);
    const first = pattern[i + 1] === '\\' ? readEscape(pattern, i + 1)[0] : (pattern[i + 1] as string);
    let j = i + 1;
    while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
    return [first, j + 1];
  }
  if (c === '(') {
    let depth = 0;
    let j = i;
    for (; j < pattern.length; j += pattern[j] === '\\' ? 2 : 1) {
      if (pattern[j] === '(') depth++;
      if (pattern[j] === ')' && --depth === 0) break;
    }
    const inner = pattern.slice(i + 1, j).replace(/^\?:/, '');
    return [patternExample(firstAlternative(inner)), j + 1];
  }
  return [c, i + 1];
}

function readEscape(pattern: string, i: number): [string, number] {
  const c = pattern[i + 1] as string;
  if (c === 'x') return [String.fromCharCode(parseInt(pattern.slice(i + 2, i + 4), 16)), i + 4];
  const classes: Record<string, string> = { d: '0', w: 'a', s: ' ' };
  return [classes[c] ?? c, i + 2];
}

function firstAlternative(inner: string): string {
  let depth = 0;
  for (let j = 0; j < inner.length; j += inner[j] === '\\' ? 2 : 1) {
    if (inner[j] === '(' || inner[j] === '[') depth++;
    if (inner[j] === ')' || inner[j] === ']') depth--;
    if (inner[j] === '|' && depth === 0) return inner.slice(0, j);
  }
  return inner;
}

function readQuantifier(pattern: string, i: number): [number, number] {
  const c = pattern[i];
  if (c === '?' || c === '*') return [0, i + 1];
  if (c === '+') return [1, i + 1];
  const bounds = c === '{' ? /^\{(\d+)(,\d*)?\}/.exec(pattern.slice(i)) : null;
  if (bounds) return [Number(bounds[1]), i + bounds[0].length];
  return [1, i];
}
