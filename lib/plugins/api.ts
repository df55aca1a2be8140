// Everything a plugin imports from Plumb, in one module: the contract, action() to declare an HTTP
// action with its checked response, TypeBox and the response-schema helpers, and the error
// helpers whose answers are Plumb's JSON errors. What is not here is not part of the plugin API.
export { Type } from '@sinclair/typebox';
export type { Static, TSchema } from '@sinclair/typebox';
export type { Context, ServiceSchema } from 'moleculer';
export type { LeaderJob } from '../../cluster/leader-jobs.ts';
export type { AccessRule, AuthMode } from '../auth/access.ts';
export { badGateway, conflict, type FieldError, forbidden, notFound, PlumbError, unavailable, validationFailed } from '../errors.ts';
export { action } from '../openapi/action.ts';
export { DateTime, envelope, NoContent, nullable, object, page, stringEnum, Uuid } from '../openapi/responses.ts';
export {
  type ArchivedAnalyticsTable,
  type ArchivedMetadataTable,
  definePlugin,
  PLUGIN_API_VERSION,
  type PluginArchiveAccess,
  type PluginAuditEntry,
  type PluginCapability,
  type PluginDefinition,
  type PluginGoalConversions,
  type PluginHost,
  type PluginMetadataStore,
  type PluginSecrets,
  type PluginSettingSpec,
  type PluginSite,
  type PluginState,
  type PluginStatusLine,
  type SettingsOf,
} from './contract.ts';
