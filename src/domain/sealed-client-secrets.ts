/**
 * The client secret of an app that has a Fitbit-compatible subscriber, kept sealed so that it can
 * sign the app's notifications exactly as Fitbit does: `X-Fitbit-Signature` is base64 of
 * HMAC-SHA1(body, client_secret + "&"), so a receiver checks them with the secret it already holds
 * (docs/migrating-from-fitbit.md, "Subscriptions"). Stride otherwise keeps only a secret's hash, so
 * the secret is sealed when it is known in clear: entered by the developer when setting the
 * subscriber (checked against the hash), or made by a rotation. The key is derived from a secret of
 * the server (docs/SECURITY.md says what that protects against, and what not).
 */
import type { Clock } from '../clock.js';
import { sealingKey, sealValue, unsealValue } from '../security/sealed-values.js';
import type { Stores } from '../store/stores.js';

type SecretStores = Pick<Stores, 'serverSecret' | 'fitbitSubscriptions'>;

const PURPOSE = 'stride: client secrets that sign Fitbit-compatible notifications';

/** One on-demand read of the server secret per set of stores (it is kept once read). */
const secretOf = new WeakMap<SecretStores, () => Promise<Buffer>>();

async function keyOf(stores: SecretStores, clock: Clock): Promise<Buffer> {
  let read = secretOf.get(stores);
  if (read === undefined) {
    read = stores.serverSecret('sealed_client_secrets', clock);
    secretOf.set(stores, read);
  }
  return sealingKey(await read(), PURPOSE);
}

/** What a sealed secret is bound to: the one app it belongs to. */
const boundTo = (appId: string) => `client secret of app ${appId}`;

export async function sealClientSecret(stores: SecretStores, clock: Clock, appId: string, clientSecret: string): Promise<string> {
  return sealValue(await keyOf(stores, clock), clientSecret, boundTo(appId));
}

/** The app's client secret that `sealed` holds; null when it cannot be opened (another server's, altered). */
export async function unsealClientSecret(stores: SecretStores, clock: Clock, appId: string, sealed: string): Promise<string | null> {
  return unsealValue(await keyOf(stores, clock), sealed, boundTo(appId));
}

/** After a rotation: the app's subscriber, if it has one, signs with the new secret from now on. */
export async function keepSubscriberSigning(stores: SecretStores, clock: Clock, appId: string, clientSecret: string): Promise<void> {
  if (!(await stores.fitbitSubscriptions.subscriber(appId))) return;
  await stores.fitbitSubscriptions.replaceSecret(appId, await sealClientSecret(stores, clock, appId, clientSecret), clock());
}
