/**
 * The endpoints doctor checks. Resolving them chooses a model for each role none is named for, by asking
 * the server for its list; when that fails (the server lists no models, or does not answer), doctor
 * resolves them again with a stand-in for the unnamed models, so that each server is still checked and
 * its own line says what is wrong there, in words that fit it.
 */
import { UserError } from '../../errors.js';
import { ROLES } from '../../llm/config.js';
import type { GraphModelConfig, ResolvedEndpoints } from '../../llm/config.js';
import type { ModelRole } from '../../llm/types.js';
import { endpointsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';

/** Where each role's calls go, or why that could not be worked out. */
export type DoctorSetup =
  | {
      endpoints: ResolvedEndpoints;
      /** Roles left without a model; `failure` says why. */
      unchosen: ReadonlySet<ModelRole>;
      failure?: UserError;
    }
  | { endpoints?: undefined; failure: UserError };

/** Not a model: marks the roles no model could be chosen for. */
const STAND_IN = '(no model chosen)';

/**
 * The stand-ins go where a graph's own choices would, below every flag and variable, so a role gets one
 * only when the user named no model for it.
 */
const STAND_IN_MODELS: GraphModelConfig = Object.fromEntries(
  ROLES.map((role) => [role, { model: STAND_IN }]),
);

/** The endpoints from the options and the environment, as every other command resolves them. */
export async function resolveSetup(options: ModelOptionValues): Promise<DoctorSetup> {
  try {
    return { endpoints: await endpointsFromOptions(options), unchosen: new Set() };
  } catch (failure) {
    if (!(failure instanceof UserError)) throw failure;
    try {
      const endpoints = await endpointsFromOptions(options, STAND_IN_MODELS);
      const unchosen = new Set(ROLES.filter((role) => endpoints[role].model === STAND_IN));
      return { endpoints, unchosen, failure };
    } catch (again) {
      if (!(again instanceof UserError)) throw again;
      return { failure };
    }
  }
}
