/**
 * How the routes' input schemas are enforced (docs/api.md, "For machines"). Every route's query,
 * path and body are validated against its schema (Ajv), and the schema decides: a violation is
 * answered 400 naming the field and the rule (describe below; app.ts) before the handler runs,
 * which then checks only what a schema cannot say. A route may word the violation its own way
 * (`schemaErrorFormatter: wordedBy(…)`: the steps routes keep the words docs/api.md quotes). The
 * routes that read their input with a parser of their own are registered with `attachValidation`:
 * the parser reads first, then refuseSchemaViolation() refuses what the schema refuses and the
 * parser let through — before the route changes anything.
 *
 * Query strings and path parameters are validated as their values are meant (`"60"` as an integer,
 * written in decimal digits only: `1e9`, `0x3c` and `1.0` are not integers here), on a copy: the
 * routes read the strings as they were sent. Bodies are validated as they are, and never changed
 * (no defaults filled in, nothing removed).
 *
 * Two keywords of Stride's own say what JSON Schema cannot about an upload, so that the first bad
 * sample of a batch is the one named, whatever is wrong with it:
 * - `notAfterClock: seconds`, on a time in Unix seconds: at most that far ahead of the server's clock;
 * - `notRepeated: {field, what}`, on the items of an array: no item has the `field` of an earlier
 *   one (a minute sent twice); the later one is refused, naming the first.
 */
import { Ajv, type ErrorObject, type SchemaObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { tooFarAheadWords } from '../domain/future-times.js';
import { invalidRequest } from '../errors.js';

// multipleOfPrecision: `multipleOf: 0.1` would refuse 2.3 (2.3 / 0.1 is 22.999999999999996 in
// binary floating point); a quotient within 1e-9 of an integer counts as one. verbose: each error
// carries the value it is about, for the words of a route that names it (`got "abc"`).
const OPTIONS = { strict: false, useDefaults: false, removeAdditional: false, coerceTypes: false, multipleOfPrecision: 9, verbose: true } as const;

/** The parts of a request Fastify validates. */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

/** A route's words for the first violation of its schema, in `part`: the whole description. */
export type Wording = (error: ErrorObject, part: RequestPart) => string;

export function installSchemaValidation(app: FastifyInstance): void {
  const clock = app.ctx.clock;
  app.setSchemaErrorFormatter(wordedBy(defaultWords));
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = compiled(schema);
    const asMeant = httpPart === 'querystring' || httpPart === 'params' ? numericFields(schema) : [];
    // Fastify words a failure with the route's schemaErrorFormatter, from `errors` (Ajv's own).
    const check = (data: unknown): boolean => {
      startCheck(clock);
      let checked = data;
      if (asMeant.length > 0 && data !== null && typeof data === 'object') {
        const copy: Record<string, unknown> = { ...data };
        for (const [name, written] of asMeant) {
          const value = copy[name];
          if (typeof value === 'string' && written.test(value)) copy[name] = Number(value);
        }
        checked = copy;
      }
      if (validate(checked)) return true;
      check.errors = validate.errors;
      return false;
    };
    check.errors = null as ErrorObject[] | null | undefined;
    return check;
  });
}

/**
 * One Ajv for the process, and each schema compiled once in it: compiling the routes' schemas was
 * a quarter of the CPU of building an app, and a process that builds many (the tests build
 * hundreds) now compiles them once. A schema is known by its JSON text, since Fastify may hand the
 * same route's schema over as another object. What differs between apps, their clock, is given to
 * the keywords at the start of each check (startCheck), and a check runs to its end synchronously.
 */
let routeAjv: Ajv | null = null;
const compiledSchemas = new Map<string, ValidateFunction>();

function compiled(schema: unknown): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = compiledSchemas.get(text);
  if (validate === undefined) {
    routeAjv ??= addStrideKeywords(new Ajv(OPTIONS));
    validate = routeAjv.compile(schema as SchemaObject);
    compiledSchemas.set(text, validate);
  }
  return validate;
}

/** Integers and numbers as a query string writes them: decimal digits, a sign, a decimal point. */
const INTEGER_TEXT = /^-?[0-9]+$/;
const NUMBER_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

/** The fields of a query or path schema whose values are numbers, and how their text is written. */
function numericFields(schema: unknown): Array<[string, RegExp]> {
  const properties = (schema as SchemaObject | null)?.properties as Record<string, { type?: unknown }> | undefined;
  const fields: Array<[string, RegExp]> = [];
  for (const [name, property] of Object.entries(properties ?? {})) {
    if (property.type === 'integer') fields.push([name, INTEGER_TEXT]);
    if (property.type === 'number') fields.push([name, NUMBER_TEXT]);
  }
  return fields;
}

/**
 * The state of the check under way, which Stride's keywords read: the clock of the app checking
 * (read once per check, when a keyword asks, not once per item of a batch) and the array whose
 * items `notRepeated` has seen.
 */
let checkClock: Clock = () => Math.floor(Date.now() / 1000);
let now: number | null = null;
let array: unknown[] | null = null;
let last: unknown = null;
let seen: Map<unknown, number> | null = null;

/** Called before each check: the app's clock, and nothing seen yet. */
function startCheck(clock: Clock): void {
  checkClock = clock;
  now = null;
  // A batch refused before its last item is let go here.
  array = seen = null;
}

/** Adds Stride's keywords to `ajv`. */
function addStrideKeywords(ajv: Ajv): Ajv {
  const notAfterClock: SchemaValidateFunction = (seconds: number, time: number) => {
    if (time <= (now ??= checkClock()) + seconds) return true;
    notAfterClock.errors = [{ keyword: 'notAfterClock', params: { seconds }, message: 'is too far ahead of the server\'s clock' }];
    return false;
  };
  ajv.addKeyword({ keyword: 'notAfterClock', type: 'number', schemaType: 'number', errors: true, validate: notAfterClock });

  // Ajv checks the items in order and stops at the first bad one, so what this check has seen of
  // an array (from its item 0 on) is the items before the current one. Uploads come in time order:
  // while each key is above the one before, none can repeat, and no set of keys is built.
  const notRepeated: SchemaValidateFunction = (rule: RepeatRule, item: Record<string, unknown>, _schema, cxt) => {
    const index = cxt?.parentDataProperty;
    if (cxt === undefined || !Array.isArray(cxt.parentData) || typeof index !== 'number') return true;
    const key = item[rule.field];
    if (index === 0 || array !== cxt.parentData) {
      array = cxt.parentData;
      seen = null;
      last = null;
    }
    const inOrder = seen === null && typeof key === 'number' && (index === 0 || (typeof last === 'number' && key > last));
    if (!inOrder) {
      seen ??= new Map(array.slice(0, index).map((earlier, at) => [(earlier as Record<string, unknown>)[rule.field], at]));
      const first = seen.get(key);
      if (first !== undefined) {
        array = seen = null;
        const arrayPath = cxt.instancePath.slice(0, cxt.instancePath.lastIndexOf('/'));
        notRepeated.errors = [{
          keyword: 'notRepeated',
          instancePath: `${cxt.instancePath}/${rule.field}`,
          params: { ...rule, value: key, firstPath: `${arrayPath}/${first}` },
          message: `repeats the ${rule.what} of ${arrayPath}/${first}`,
        }];
        return false;
      }
      seen.set(key, index);
    }
    last = key;
    // The batch is not kept once its last item is checked.
    if (index === array.length - 1) array = seen = null;
    return true;
  };
  ajv.addKeyword({ keyword: 'notRepeated', type: 'object', schemaType: 'object', errors: true, validate: notRepeated });
  return ajv;
}

/** `notRepeated`: the field of an item that no later item may repeat, and what its value is (`minute`). */
export interface RepeatRule {
  field: string;
  what: string;
}

/** Fastify's form of a route's words (its `schemaErrorFormatter`): the first violation, worded. */
export function wordedBy(words: Wording): (errors: unknown, part: string) => Error {
  return (errors, part) => {
    const [first] = (errors as ErrorObject[] | null | undefined) ?? [];
    return new Error(first === undefined ? `${part} is not valid` : words(first, part as RequestPart));
  };
}

let recordChecker: Ajv | null = null;

/**
 * A check of one value against `schema` with the rules and words of a route's input check, for
 * input that comes another way (`stride import` checks each record of a file with the schema its
 * route takes): what is wrong, as the field's path and the rule (`/bpm must be <= 250`; ` must be
 * object` for the value itself), for the caller to put after its name of the value; null when the
 * value passes. Stride's own keywords are not checked here (a record has no array around it, the
 * caller its own clock): the caller checks the clock and repeats itself.
 */
export function schemaCheck(schema: object): (value: unknown) => string | null {
  // Compiled at the first value, not here: the command line makes its checks when it loads, and
  // a second Ajv with its meta-schema would cost every other command, `stride serve` among them,
  // a tenth of a second or more of CPU for nothing.
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= (recordChecker ??= new Ajv(OPTIONS)).compile(schema);
    return validate(value) || !validate.errors?.[0] ? null : describe(validate.errors[0]);
  };
}

/** The words of every route that has none of its own: `querystring/start_time must be integer`. */
function defaultWords(error: ErrorObject, part: RequestPart): string {
  return `${part}${describe(error, part)}`;
}

/**
 * The error, as the field's path and the rule: `/samples/3/bpm must be <= 250` (`part` goes before
 * the path of another field it names). Where Ajv's words
 * would not name the field or the rule (a missing or an unknown field, an enumeration, a number of
 * decimals), the field is named and the values or the rule spelt out.
 */
function describe(error: ErrorObject, part = ''): string {
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
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
    case 'notAfterClock':
      return tooFarAheadWords(path, Number(params.seconds));
    case 'notRepeated':
      return `${path} repeats the ${String(params.what)} of ${part}${String(params.firstPath)}; send one sample per ${String(params.what)}`;
    default:
      return `${path} ${error.message ?? 'is not valid'}`;
  }
}

/** Refuses input the route's schema refuses (its parser having accepted it): 400 invalid_request. */
export function refuseSchemaViolation(request: FastifyRequest): void {
  if (request.validationError) throw invalidRequest(request.validationError.message);
}
