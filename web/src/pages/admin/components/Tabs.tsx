import { useRef, type KeyboardEvent } from 'react';

export interface TabDef<K extends string> {
  key: K;
  label: string;
}

/**
 * WAI-ARIA tabs: real buttons with `role="tab"` and `aria-selected`; the selected tab is the one
 * in the tab order, arrow keys (and Home / End) move between tabs and select them.
 */
export function Tabs<K extends string>({
  tabs,
  selected,
  onSelect,
  label,
  idPrefix,
}: {
  tabs: TabDef<K>[];
  selected: K;
  onSelect: (key: K) => void;
  label: string;
  idPrefix: string;
}) {
  const refs = useRef(new Map<K, HTMLButtonElement>());
  const move = (event: KeyboardEvent<HTMLButtonElement>, index: number) => {
    let next: number | null = null;
    if (event.key === 'ArrowRight' || event.key === 'ArrowDown') next = (index + 1) % tabs.length;
    else if (event.key === 'ArrowLeft' || event.key === 'ArrowUp') next = (index - 1 + tabs.length) % tabs.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = tabs.length - 1;
    if (next === null) return;
    event.preventDefault();
    const tab = tabs[next];
    if (!tab) return;
    onSelect(tab.key);
    refs.current.get(tab.key)?.focus();
  };
  return (
    <div role="tablist" aria-label={label} className="ap-tabs">
      {tabs.map((tab, index) => {
        const isSelected = tab.key === selected;
        return (
          <button
            key={tab.key}
            ref={(node) => {
              if (node) refs.current.set(tab.key, node);
              else refs.current.delete(tab.key);
            }}
            type="button"
            role="tab"
            id={`${idPrefix}-tab-${tab.key}`}
            aria-selected={isSelected}
            aria-controls={isSelected ? `${idPrefix}-panel-${tab.key}` : undefined}
            tabIndex={isSelected ? 0 : -1}
            className={isSelected ? 'ap-tab ap-tab-selected' : 'ap-tab'}
            onClick={() => onSelect(tab.key)}
            onKeyDown={(event) => move(event, index)}
          >
            {tab.label}
          </button>
        );
      })}
    </div>
  );
}
