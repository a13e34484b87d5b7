/**
 * The app form of the developer dashboard: what the person typed, kept as typed so that a page
 * with errors shows it again, and its reading into the settings src/domain/apps.ts checks.
 */
import { APP_GRANT_TYPES, DEVICE_CODE_GRANT_TYPE, validateAppSettings, type AppSettings, type FieldProblem } from '../../domain/apps.js';
import { ALL_SCOPES, formatScopes, parseScopeString, SCOPES } from '../../domain/scopes.js';
import type { App } from '../../store/apps.js';
import { text, values, type Form } from '../forms.js';
import { FORM_ID_FIELD, isFormId } from '../form-ids.js';

/** The app form as the user typed it; redirect URIs stay one per line so errors keep the input. */
export interface AppForm {
  /** The registration form's id (form-ids.ts), so that sending it twice registers one app. */
  formId?: string;
  name: string;
  description: string;
  websiteUrl: string;
  redirectUris: string;
  scopes: string[];
  isPublic: boolean;
  grantTypes: string[];
  /** Whether any grant type was ticked: none ticked keeps what the app has (an app needs one). */
  grantTypesShown: boolean;
  /** "Require DPoP": token requests without a proof are refused (RFC 9449). */
  requireDpop: boolean;
  /** Authorization requests only through PAR (RFC 9126 §6). */
  requirePar: boolean;
}

export type FieldErrors = Partial<Record<FieldProblem['field'], string>>;

export const SCOPE_CHOICES = ALL_SCOPES.map((name) => ({ name, description: SCOPES[name] }));

/** The grant types a developer may allow, in plain words (docs/oauth.md, "Grant types per app"). */
export const GRANT_TYPE_CHOICES = APP_GRANT_TYPES.map((name) => ({
  name,
  id: name === DEVICE_CODE_GRANT_TYPE ? 'device_code' : name,
  description: {
    authorization_code: 'Sign-in in a browser (authorization code with PKCE)',
    refresh_token: 'Staying connected (refresh tokens)',
    [DEVICE_CODE_GRANT_TYPE]: 'Devices without a browser: a code typed at /device (RFC 8628)',
  }[name],
}));

export function readAppForm(form: Form): AppForm {
  const formId = form[FORM_ID_FIELD];
  return {
    ...(isFormId(formId) && { formId }),
    name: text(form.name),
    description: text(form.description),
    websiteUrl: text(form.website_url).trim(),
    redirectUris: text(form.redirect_uris),
    // Checkboxes send one value each; the confirmation step sends them space-separated.
    scopes: formatScopes(values(form.scopes).flatMap(parseScopeString)).split(' ').filter((s) => s !== ''),
    isPublic: text(form.client_type) === 'public',
    grantTypes: values(form.grant_types),
    grantTypesShown: values(form.grant_types).length > 0,
    requireDpop: text(form.require_dpop) === 'yes',
    requirePar: text(form.require_par) === 'yes',
  };
}

function splitLines(value: string): string[] {
  return value.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '');
}

export function settingsOf(form: AppForm): AppSettings {
  return {
    name: form.name,
    description: form.description,
    websiteUrl: form.websiteUrl,
    redirectUris: splitLines(form.redirectUris),
    scopes: form.scopes,
    // None ticked (or a form from before the setting): the grant types stay as they are.
    ...(form.grantTypesShown && { grantTypes: form.grantTypes }),
    requireDpop: form.requireDpop,
    requirePar: form.requirePar,
  };
}

export function formOf(app: App): AppForm {
  return {
    name: app.name,
    description: app.description,
    websiteUrl: app.websiteUrl,
    redirectUris: app.redirectUris.join('\n'),
    scopes: app.scopes,
    isPublic: app.isPublic,
    grantTypes: app.grantTypes,
    grantTypesShown: true,
    requireDpop: app.requireDpop,
    requirePar: app.requirePar,
  };
}

const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1) + '.';

/** Every field's problem at once (the domain check stops at the first), so each shows next to its field. */
export function fieldErrors(settings: AppSettings): FieldErrors {
  const errors: FieldErrors = {};
  const checks: Array<Partial<AppSettings>> = [
    { name: settings.name },
    { description: settings.description },
    { websiteUrl: settings.websiteUrl },
    { redirectUris: settings.redirectUris },
    { scopes: settings.scopes },
    { grantTypes: settings.grantTypes },
  ];
  for (const check of checks) {
    const problem = validateAppSettings(check);
    if (problem) errors[problem.field] = sentence(problem.message);
  }
  return errors;
}
