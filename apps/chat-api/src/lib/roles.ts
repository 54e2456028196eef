/** Roles as Zulip numbers them: lower is more powerful. */
export const Role = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;

/** An organization owner. */
export const isOwner = (role: number): boolean => role <= Role.OWNER;

/** An organization administrator (owners included). */
export const isAdministrator = (role: number): boolean => role <= Role.ADMINISTRATOR;

/** A guest. */
export const isGuest = (role: number): boolean => role >= Role.GUEST;
