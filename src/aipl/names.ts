/** How a stored value is named when it comes from outside a template: a command line or a file of values. */

/** A name as templates write it, `ns.key` (AIPL names are letters, digits and `_`); `vars.name` too. */
export const STATE_NAME = /^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/;
