import { theme } from 'antd';
import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * The console's charts, drawn as SVG with antd's theme tokens (light and dark follow the theme). They replace
 * ECharts, which was 160 KB brotli of the dashboard's first load. Each chart is `role="img"` named by `label`, with
 * every value in an SVG <title> (hover tooltip) and a hover panel listing the category's values.
 */

/** Series colours, readable on light and dark backgrounds. */
const PALETTE = ['#5470c6', '#91cc75', '#fac858', '#ee6666', '#73c0de', '#3ba272', '#fc8452', '#9a60b4', '#ea7ccc'];

export interface ChartSeries {
  name: string;
  /** `line` (optionally `area`) or `bar`; bars with `stack` set are stacked, the others side by side. */
  kind: 'line' | 'bar';
  values: number[];
  area?: boolean;
  stack?: boolean;
}

const FONT = 12;
const charWidth = (s: string) => s.length * FONT * 0.62;

/** Width of the chart's box, followed with a ResizeObserver (600 where nothing measures, as in tests). */
function useWidth(): [React.RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement | null>(null);
  const [width, setWidth] = useState(600);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(([e]) => {
      const w = Math.floor(e.contentRect.width);
      if (w > 0) setWidth(w);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

/** Round axis ticks covering [min, max] (min ≤ 0 ≤ max). */
function niceTicks(min: number, max: number, count = 5): number[] {
  if (min === max) max = min + 1;
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const lo = Math.floor(min / step) * step;
  const hi = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

function Legend({ names, colors }: { names: string[]; colors: string[] }) {
  const { token } = theme.useToken();
  return (
    <div aria-hidden style={{ display: 'flex', flexWrap: 'wrap', gap: '4px 16px', justifyContent: 'center', fontSize: FONT, color: token.colorTextSecondary }}>
      {names.map((n, i) => (
        <span key={n + i} style={{ display: 'inline-flex', alignItems: 'center', gap: 6 }}>
          <span style={{ width: 12, height: 8, borderRadius: 2, background: colors[i % colors.length] }} />
          {n}
        </span>
      ))}
    </div>
  );
}

function HoverPanel({ x, y, children }: { x: number; y: number; children: ReactNode }) {
  const { token } = theme.useToken();
  return (
    <div
      aria-hidden
      style={{
        position: 'absolute',
        left: x,
        top: y,
        transform: 'translate(8px, 8px)',
        pointerEvents: 'none',
        background: token.colorBgElevated,
        color: token.colorText,
        boxShadow: token.boxShadowSecondary,
        borderRadius: token.borderRadiusSM,
        padding: '6px 10px',
        fontSize: FONT,
        whiteSpace: 'nowrap',
        zIndex: 1,
      }}
    >
      {children}
    </div>
  );
}

/**
 * Series over categories: days along the x axis (`horizontal` false) or names down the y axis (`horizontal` true),
 * as lines, areas and bars (grouped or stacked). `format` formats the values on the axis and in tooltips.
 */
export function SeriesChart({
  label,
  categories,
  series,
  format = (v) => String(v),
  horizontal = false,
  height = 300,
}: {
  label: string;
  categories: string[];
  series: ChartSeries[];
  format?: (v: number) => string;
  horizontal?: boolean;
  height?: number;
}) {
  const { token } = theme.useToken();
  const [ref, width] = useWidth();
  const [hover, setHover] = useState<{ i: number; x: number; y: number } | null>(null);
  const colors = PALETTE;

  // Value domain: stacked bars add up, the rest stand alone.
  let lo = 0;
  let hi = 0;
  categories.forEach((_, i) => {
    let pos = 0;
    let neg = 0;
    for (const s of series) {
      const v = s.values[i] ?? 0;
      if (s.kind === 'bar' && s.stack) {
        if (v >= 0) pos += v;
        else neg += v;
      } else {
        hi = Math.max(hi, v);
        lo = Math.min(lo, v);
      }
    }
    hi = Math.max(hi, pos);
    lo = Math.min(lo, neg);
  });
  const ticks = niceTicks(lo, hi);
  const vMin = ticks[0];
  const vMax = ticks[ticks.length - 1];
  const tickLabels = ticks.map(format);

  const catLabel = (c: string) => (c.length > 18 ? `${c.slice(0, 17)}…` : c);
  const left = horizontal ? Math.min(160, Math.max(...categories.map((c) => charWidth(catLabel(c))), 20) + 12) : Math.max(...tickLabels.map(charWidth)) + 12;
  const right = horizontal ? Math.max(16, charWidth(tickLabels[tickLabels.length - 1]) / 2 + 4) : 16;
  const top = 12;
  const bottom = 24;
  const plotW = Math.max(40, width - left - right);
  const plotH = Math.max(40, height - top - bottom);
  const n = Math.max(categories.length, 1);
  const band = (horizontal ? plotH : plotW) / n;
  const valPos = (v: number) => (horizontal ? left + ((v - vMin) / (vMax - vMin)) * plotW : top + plotH - ((v - vMin) / (vMax - vMin)) * plotH);
  const catCenter = (i: number) => (horizontal ? top : left) + band * (i + 0.5);
  const zero = valPos(0);

  const bars = series.map((s, si) => ({ s, si })).filter(({ s }) => s.kind === 'bar');
  const stacked = bars.filter(({ s }) => s.stack);
  const grouped = bars.filter(({ s }) => !s.stack);
  const groups = grouped.length + (stacked.length > 0 ? 1 : 0);
  const barW = Math.max(1, Math.min(40, (band * 0.7) / Math.max(groups, 1)));

  const shapes: ReactNode[] = [];
  categories.forEach((cat, i) => {
    const start = catCenter(i) - (barW * groups) / 2;
    let pos = 0;
    let neg = 0;
    bars.forEach(({ s, si }) => {
      const v = s.values[i] ?? 0;
      let a: number;
      let b: number;
      let slot: number;
      if (s.stack) {
        slot = grouped.length;
        if (v >= 0) {
          a = pos;
          b = pos + v;
          pos = b;
        } else {
          a = neg;
          b = neg + v;
          neg = b;
        }
      } else {
        slot = grouped.findIndex((g) => g.si === si);
        a = 0;
        b = v;
      }
      const p1 = valPos(a);
      const p2 = valPos(b);
      const off = start + slot * barW;
      const rect = horizontal
        ? { x: Math.min(p1, p2), y: off, width: Math.abs(p2 - p1), height: barW }
        : { x: off, y: Math.min(p1, p2), width: barW, height: Math.abs(p2 - p1) };
      shapes.push(
        <rect key={`b${si}-${i}`} {...rect} fill={colors[si % colors.length]}>
          <title>{`${cat} · ${s.name}: ${format(v)}`}</title>
        </rect>,
      );
    });
  });

  const lines = series.map((s, si) => {
    if (s.kind !== 'line') return null;
    const pts = categories.map((_, i) => [catCenter(i), valPos(s.values[i] ?? 0)] as const);
    if (pts.length === 0) return null;
    const d = pts.map(([x, y], k) => `${k ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`).join('');
    const color = colors[si % colors.length];
    return (
      <g key={`l${si}`}>
        {s.area && pts.length > 0 && (
          <path d={`${d}L${pts[pts.length - 1][0].toFixed(1)},${zero.toFixed(1)}L${pts[0][0].toFixed(1)},${zero.toFixed(1)}Z`} fill={color} opacity={0.25} />
        )}
        <path d={d} fill="none" stroke={color} strokeWidth={2} strokeLinejoin="round" />
        {pts.map(([x, y], i) => (
          <circle key={i} cx={x} cy={y} r={pts.length > 40 ? 1.5 : 3} fill={token.colorBgContainer} stroke={color} strokeWidth={1.5}>
            <title>{`${categories[i]} · ${s.name}: ${format(s.values[i] ?? 0)}`}</title>
          </circle>
        ))}
      </g>
    );
  });

  // Category labels: thin them out so they do not overlap.
  const longest = Math.max(...categories.map((c) => (horizontal ? FONT + 4 : charWidth(catLabel(c)) + 8)), 1);
  const every = Math.max(1, Math.ceil(longest / band));

  const onMove = (e: React.MouseEvent<SVGSVGElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - box.left;
    const y = e.clientY - box.top;
    const along = horizontal ? y - top : x - left;
    const i = Math.floor(along / band);
    setHover(i >= 0 && i < categories.length ? { i, x, y } : null);
  };

  return (
    <div ref={ref} style={{ position: 'relative', width: '100%' }}>
      {series.length > 1 && <Legend names={series.map((s) => s.name)} colors={colors} />}
      <svg
        role="img"
        aria-label={label}
        width={width}
        height={height}
        style={{ display: 'block', fontSize: FONT, fontFamily: 'inherit' }}
        onMouseMove={onMove}
        onMouseLeave={() => setHover(null)}
      >
        {hover && (
          <rect
            x={horizontal ? left : left + band * hover.i}
            y={horizontal ? top + band * hover.i : top}
            width={horizontal ? plotW : band}
            height={horizontal ? band : plotH}
            fill={token.colorFillTertiary}
          />
        )}
        {ticks.map((v, k) => {
          const p = valPos(v);
          return horizontal ? (
            <g key={k}>
              <line x1={p} x2={p} y1={top} y2={top + plotH} stroke={token.colorBorderSecondary} />
              <text x={p} y={top + plotH + 16} textAnchor="middle" fill={token.colorTextSecondary}>
                {tickLabels[k]}
              </text>
            </g>
          ) : (
            <g key={k}>
              <line x1={left} x2={left + plotW} y1={p} y2={p} stroke={token.colorBorderSecondary} />
              <text x={left - 6} y={p + 4} textAnchor="end" fill={token.colorTextSecondary}>
                {tickLabels[k]}
              </text>
            </g>
          );
        })}
        {categories.map((c, i) =>
          i % every !== 0 ? null : horizontal ? (
            <text key={i} x={left - 6} y={catCenter(i) + 4} textAnchor="end" fill={token.colorTextSecondary}>
              {catLabel(c)}
            </text>
          ) : (
            <text key={i} x={catCenter(i)} y={top + plotH + 16} textAnchor="middle" fill={token.colorTextSecondary}>
              {catLabel(c)}
            </text>
          ),
        )}
        {horizontal ? (
          <line x1={zero} x2={zero} y1={top} y2={top + plotH} stroke={token.colorBorder} />
        ) : (
          <line x1={left} x2={left + plotW} y1={zero} y2={zero} stroke={token.colorBorder} />
        )}
        {shapes}
        {lines}
      </svg>
      {hover && (
        <HoverPanel x={Math.min(hover.x, width - 180)} y={hover.y}>
          <div style={{ fontWeight: 600, marginBottom: 2 }}>{categories[hover.i]}</div>
          {series.map((s, si) => (
            <div key={si} style={{ display: 'flex', alignItems: 'center', gap: 6 }}>
              <span style={{ width: 8, height: 8, borderRadius: 4, background: colors[si % colors.length] }} />
              <span>{s.name}</span>
              <span style={{ marginLeft: 'auto', paddingLeft: 12, fontWeight: 600 }}>{format(s.values[hover.i] ?? 0)}</span>
            </div>
          ))}
        </HoverPanel>
      )}
    </div>
  );
}

/** Shares of a whole as a ring, with a legend; `format` formats the values in tooltips. */
export function DonutChart({
  label,
  items,
  format = (v) => String(v),
  height = 300,
}: {
  label: string;
  items: { name: string; value: number }[];
  format?: (v: number) => string;
  height?: number;
}) {
  const { token } = theme.useToken();
  const [ref, width] = useWidth();
  const [hover, setHover] = useState<{ i: number; x: number; y: number } | null>(null);
  const total = items.reduce((s, it) => s + Math.max(0, it.value), 0);
  const size = Math.min(width, height - 8);
  const cx = width / 2;
  const cy = size / 2 + 4;
  const outer = size * 0.45;
  const inner = outer * 0.6;
  const pct = (v: number) => (total > 0 ? `${((v / total) * 100).toFixed(1)} %` : '');

  let angle = -Math.PI / 2;
  const arcs = items.map((it, i) => {
    const frac = total > 0 ? Math.max(0, it.value) / total : 0;
    const a0 = angle;
    const a1 = angle + frac * Math.PI * 2;
    angle = a1;
    const color = PALETTE[i % PALETTE.length];
    const title = <title>{`${it.name}: ${format(it.value)} (${pct(it.value)})`}</title>;
    if (frac >= 0.9999) {
      return (
        <path
          key={i}
          d={`M${cx - outer},${cy}a${outer},${outer} 0 1,0 ${outer * 2},0a${outer},${outer} 0 1,0 ${-outer * 2},0ZM${cx - inner},${cy}a${inner},${inner} 0 1,1 ${inner * 2},0a${inner},${inner} 0 1,1 ${-inner * 2},0Z`}
          fillRule="evenodd"
          fill={color}
          onMouseMove={(e) => setHover({ i, ...pointIn(e) })}
        >
          {title}
        </path>
      );
    }
    if (frac <= 0) return null;
    const large = a1 - a0 > Math.PI ? 1 : 0;
    const p = (r: number, a: number) => `${(cx + r * Math.cos(a)).toFixed(2)},${(cy + r * Math.sin(a)).toFixed(2)}`;
    const d = `M${p(outer, a0)}A${outer},${outer} 0 ${large},1 ${p(outer, a1)}L${p(inner, a1)}A${inner},${inner} 0 ${large},0 ${p(inner, a0)}Z`;
    return (
      <path key={i} d={d} fill={color} stroke={token.colorBgContainer} strokeWidth={1} onMouseMove={(e) => setHover({ i, ...pointIn(e) })}>
        {title}
      </path>
    );
  });

  return (
    <div ref={ref} style={{ position: 'relative', width: '100%' }}>
      <svg role="img" aria-label={label} width={width} height={size + 8} style={{ display: 'block' }} onMouseLeave={() => setHover(null)}>
        {arcs}
      </svg>
      <Legend names={items.map((it) => it.name)} colors={PALETTE} />
      {hover && items[hover.i] && (
        <HoverPanel x={Math.min(hover.x, width - 180)} y={hover.y}>
          <span style={{ display: 'inline-block', width: 8, height: 8, borderRadius: 4, marginRight: 6, background: PALETTE[hover.i % PALETTE.length] }} />
          {items[hover.i].name}: <b>{format(items[hover.i].value)}</b> ({pct(items[hover.i].value)})
        </HoverPanel>
      )}
    </div>
  );
}

function pointIn(e: React.MouseEvent<SVGPathElement>) {
  const box = (e.currentTarget.ownerSVGElement as SVGSVGElement).getBoundingClientRect();
  return { x: e.clientX - box.left, y: e.clientY - box.top };
}
