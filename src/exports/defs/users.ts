import { defineExport, field } from '../define.js';

const IN_PROFILES = 'a profile or account-state field: in user_profiles';

export default defineExport({
  name: 'users',
  description: 'One row per user account: identity and role. Profile and account-state fields are in user_profiles.',
  route: 'users',
  key: ['id'],
  columns: [
    field('id'),
    field('firstName'),
    field('lastName'),
    field('email', { note: 'login email / username' }),
    field('role', { note: 'allowed values not documented' }),
    field('permissions', { note: 'raw permission codes; the API does not resolve them to names' }),
  ],
  omit: {
    contactEmail: IN_PROFILES,
    joined: IN_PROFILES,
    lastLogin: IN_PROFILES,
    state: IN_PROFILES,
    stateReason: IN_PROFILES,
    deactivationType: IN_PROFILES,
    department: IN_PROFILES,
    position: IN_PROFILES,
    comment: IN_PROFILES,
    neverEscrow: IN_PROFILES,
    passChanged: IN_PROFILES,
    expiration: IN_PROFILES,
    tosAccepted: IN_PROFILES,
    deactivatedUntil: IN_PROFILES,
    lastEscrow: IN_PROFILES,
  },
});
