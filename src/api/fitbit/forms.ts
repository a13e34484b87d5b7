/** The form fields of Fitbit's writes (`application/x-www-form-urlencoded`, as Fitbit takes them). */
import { validation } from './errors.js';

export type FormBody = Record<string, string | string[] | undefined> | undefined;

/** A required field, once. */
export function formField(form: FormBody, name: string): string {
  const value = form?.[name];
  if (typeof value !== 'string' || value === '') throw validation(name, `${name} is required.`);
  return value;
}

/** An optional field, once; undefined when absent or empty. */
export function optionalFormField(form: FormBody, name: string): string | undefined {
  const value = form?.[name];
  if (Array.isArray(value)) throw validation(name, `${name} must be given once.`);
  return value === undefined || value === '' ? undefined : value;
}
