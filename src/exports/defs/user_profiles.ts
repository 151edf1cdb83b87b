import { defineExport, field } from '../define.js';

const IN_USERS = 'an identity or role field: in users';

export default defineExport({
  name: 'user_profiles',
  description:
    'One row per user account: profile (contact, organisation, notes) and account state (activity, ' +
    'deactivation, expiry, escrow). The name and `email` are repeated from users so the sheet reads on its own.',
  route: 'users',
  key: ['id'],
  columns: [
    field('id'),
    field('firstName', { note: 'repeated from users' }),
    field('lastName', { note: 'repeated from users' }),
    field('email', { note: 'login email / username, repeated from users' }),
    field('contactEmail', { note: 'null: the same as the login email' }),
    field('department'),
    field('position'),
    field('comment', { note: 'admin-visible notes' }),
    field('joined'),
    field('lastLogin'),
    field('state', { note: 'account state; allowed values not documented' }),
    field('stateReason'),
    field('deactivationType'),
    field('deactivatedUntil', { note: 'end of a temporary deactivation' }),
    field('expiration', { note: 'account expiration' }),
    field('passChanged', { note: 'last credential change' }),
    field('tosAccepted'),
    field('neverEscrow'),
    field('lastEscrow'),
  ],
  omit: {
    role: IN_USERS,
    permissions: IN_USERS,
  },
});
