import { ChatLayout, type ChatLayoutProps } from './layouts/ChatLayout.js';
import { DesignLayout, type DesignLayoutProps } from './layouts/DesignLayout.js';
import { ThemeContext, themeFromEnv, type Theme } from './theme.js';

/** Chat mode talks with an agent; design mode watches the designer build one. */
export type AppProps = (({ mode: 'chat' } & ChatLayoutProps) | ({ mode: 'design' } & DesignLayoutProps)) & {
  /** Defaults to the theme `NO_COLOR` selects. */
  theme?: Theme;
};

/** Chooses the layout for the mode; the layouts wire the hooks. */
export function App(props: AppProps) {
  return (
    <ThemeContext.Provider value={props.theme ?? themeFromEnv()}>
      {props.mode === 'chat' ? <ChatLayout {...props} /> : <DesignLayout {...props} />}
    </ThemeContext.Provider>
  );
}
