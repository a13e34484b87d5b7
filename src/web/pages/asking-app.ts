/**
 * The app whose authorization request led a person to sign in or sign up: the pages say which app
 * is asking before they ask for a password, as the consent page will after. Only a request for a
 * registered app names one; the request itself is checked in full when the person comes back to it.
 */
import type { AppContext } from '../../context.js';
import { developerName } from '../../oauth/authorize.js';

export interface AskingApp {
  name: string;
  /** Null for an app that registered itself: no one vouches for who made it (developerName). */
  developer: string | null;
}

export async function appAsking(ctx: AppContext, returnTo: string): Promise<AskingApp | null> {
  const [path, query] = returnTo.split('?') as [string, string | undefined];
  if (path !== '/oauth2/authorize' || query === undefined) return null;
  const clientId = new URLSearchParams(query).getAll('client_id');
  if (clientId.length !== 1) return null;
  const app = await ctx.stores.apps.findByClientId(clientId[0]!);
  return app ? { name: app.name, developer: await developerName(ctx, app) } : null;
}
