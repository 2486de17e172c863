/** What the server's middleware tells its routes about a request. */
export interface ServeEnv {
  Variables: {
    /** Whose request it is: an API key's owner name, or `local` when the server asks for no key. */
    owner: string;
  };
}
