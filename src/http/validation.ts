/**
 * How the routes' input schemas are enforced (docs/api.md, "For machines"). Every route's query,
 * path and body are validated against its schema (Ajv), and every route is registered with
 * `attachValidation`: the route's own parser reads the input first, so that an error names the field
 * and the rule in the words of docs/api.md, and then refuseSchemaViolation() refuses what the schema
 * refuses and the parser let through — before the route changes anything.
 *
 * Query strings and path parameters are validated as their values are meant (`"60"` as an integer),
 * on a copy: the parsers read the strings as they were sent. Bodies are validated as they are, and
 * never changed (no defaults filled in, nothing removed).
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidRequest } from '../errors.js';

export function installSchemaValidation(app: FastifyInstance): void {
  const asSent = new Ajv({ strict: false, coerceTypes: false, useDefaults: false, removeAdditional: false });
  const asMeant = new Ajv({ strict: false, coerceTypes: true, useDefaults: false, removeAdditional: false });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const textual = httpPart === 'querystring' || httpPart === 'params';
    const validate = (textual ? asMeant : asSent).compile(schema);
    return (data: unknown) => {
      const checked = textual && data !== null && typeof data === 'object' ? { ...data } : data;
      return validate(checked) ? { value: data } : { error: new Error(`${httpPart}${describe(validate.errors)}`) };
    };
  });
}

/**
 * The first error, after the part's name: the field's path and the rule (`/samples/3/bpm must be
 * <= 250`). Where Ajv's words would not name the field or the values it takes (a missing or an
 * unknown property, an enum), the field is named and the values listed.
 */
function describe(errors: ErrorObject[] | null | undefined): string {
  const [first] = errors ?? [];
  if (!first) return ' is not valid';
  const path = first.instancePath;
  const params = first.params as Record<string, unknown>;
  switch (first.keyword) {
    case 'required':
      return `${path}/${String(params.missingProperty)} is required`;
    case 'additionalProperties':
      return `${path}/${String(params.additionalProperty).slice(0, 40)} is not a known field`;
    case 'enum':
      return `${path} must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    default:
      return `${path} ${first.message ?? 'is not valid'}`;
  }
}

/** Refuses input the route's schema refuses (its parser having accepted it): 400 invalid_request. */
export function refuseSchemaViolation(request: FastifyRequest): void {
  if (request.validationError) throw invalidRequest(request.validationError.message);
}
