/**
 * How the routes' input schemas are enforced (docs/api.md, "For machines"). Every route's query,
 * path and body are validated against its schema (Ajv). A route whose schema decides answers a
 * violation with 400 naming the field and the rule (describe below; app.ts) before its handler runs,
 * which then checks only what a schema cannot say. The routes of the first version are registered
 * with `attachValidation`: their own parser reads the input first, so that an error is in the words
 * of docs/api.md, and then refuseSchemaViolation() refuses what the schema refuses and the parser let
 * through — before the route changes anything.
 *
 * Query strings and path parameters are validated as their values are meant (`"60"` as an integer),
 * on a copy: the parsers read the strings as they were sent. Bodies are validated as they are, and
 * never changed (no defaults filled in, nothing removed).
 */
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidRequest } from '../errors.js';

// multipleOfPrecision: `multipleOf: 0.1` would refuse 2.3 (2.3 / 0.1 is 22.999999999999996 in
// binary floating point); a quotient within 1e-9 of an integer counts as one.
const OPTIONS = { strict: false, useDefaults: false, removeAdditional: false, multipleOfPrecision: 9 } as const;

export function installSchemaValidation(app: FastifyInstance): void {
  const asSent = new Ajv({ ...OPTIONS, coerceTypes: false });
  const asMeant = new Ajv({ ...OPTIONS, coerceTypes: true });
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const textual = httpPart === 'querystring' || httpPart === 'params';
    const validate = (textual ? asMeant : asSent).compile(schema);
    return (data: unknown) => {
      const checked = textual && data !== null && typeof data === 'object' ? { ...data } : data;
      return validate(checked) ? { value: data } : { error: new Error(`${httpPart}${describe(validate.errors)}`) };
    };
  });
}

let recordChecker: Ajv | null = null;

/**
 * A check of one value against `schema` with the rules and words of a route's input check, for
 * input that comes another way (`stride import` checks each record of a file with the schema its
 * route takes): what is wrong, as the field's path and the rule (`/bpm must be <= 250`; ` must be
 * object` for the value itself), for the caller to put after its name of the value; null when the
 * value passes.
 */
export function schemaCheck(schema: object): (value: unknown) => string | null {
  recordChecker ??= new Ajv({ ...OPTIONS, coerceTypes: false });
  const validate = recordChecker.compile(schema);
  return (value) => (validate(value) ? null : describe(validate.errors));
}

/**
 * The first error, after the part of the request it is in: the field's path and the rule, as
 * `body/samples/3/bpm must be <= 250`. Where Ajv's words would not name the field or the rule (a
 * missing or an unknown field, an enumeration, a number of decimals), the field is named and the
 * values or the rule spelt out.
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
    case 'multipleOf': {
      const step = Number(params.multipleOf);
      if (step < 1) {
        const decimals = Math.round(-Math.log10(step));
        return `${path} must have at most ${decimals === 1 ? 'one decimal' : `${decimals} decimals`}`;
      }
      return `${path} must be a multiple of ${step}`;
    }
    default:
      return `${path} ${first.message ?? 'is not valid'}`;
  }
}

/** Refuses input the route's schema refuses (its parser having accepted it): 400 invalid_request. */
export function refuseSchemaViolation(request: FastifyRequest): void {
  if (request.validationError) throw invalidRequest(request.validationError.message);
}
