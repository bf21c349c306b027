import { Form, InputNumber, Select } from 'antd';
import { useTranslation } from 'react-i18next';
import { STRATEGIES, type RoutePrefs } from '../../api/routing';

/** Form values of routing preferences (the same fields in the simulator, the profile and a key). */
export interface PrefsValues {
  strategy?: string;
  prefer?: string[];
  avoid?: string[];
  max_price?: number | null;
  min_success?: number | null;
  max_p95_ms?: number | null;
  require?: string[];
}

/** toPrefs drops empty fields (0 and [] mean "not set" on the server). */
export function toPrefs(v: PrefsValues): RoutePrefs {
  const out: RoutePrefs = {};
  if (v.strategy) out.strategy = v.strategy;
  if (v.prefer?.length) out.prefer = v.prefer;
  if (v.avoid?.length) out.avoid = v.avoid;
  if (v.require?.length) out.require = v.require;
  if (v.max_price) out.max_price = v.max_price;
  if (v.min_success) out.min_success = v.min_success;
  if (v.max_p95_ms) out.max_p95_ms = v.max_p95_ms;
  return out;
}

const TARGET = /^(channel:[1-9][0-9]*|tag:.{1,64})$/;

/** The preference fields, inside a Form (optionally under a name prefix). */
export function PrefsFields({ prefix = [] }: { prefix?: string[] }) {
  const { t } = useTranslation();
  const targets = {
    validator: async (_: unknown, v?: string[]) => {
      if ((v ?? []).some((x) => !TARGET.test(x))) throw new Error(t('routing.targetsHint'));
    },
  };
  return (
    <>
      <Form.Item name={[...prefix, 'strategy']} label={t('routing.strategy')}>
        <Select
          allowClear
          placeholder={t('routing.strategyDefault')}
          options={STRATEGIES.map((s) => ({ value: s, label: t(`routing.strategy_${s}`) }))}
        />
      </Form.Item>
      <Form.Item name={[...prefix, 'prefer']} label={t('routing.prefer')} extra={t('routing.targetsHint')} rules={[targets]}>
        <Select mode="tags" open={false} />
      </Form.Item>
      <Form.Item name={[...prefix, 'avoid']} label={t('routing.avoid')} extra={t('routing.targetsHint')} rules={[targets]}>
        <Select mode="tags" open={false} />
      </Form.Item>
      <Form.Item name={[...prefix, 'max_price']} label={t('routing.maxPrice')}>
        <InputNumber min={0} max={1000000} style={{ width: '100%' }} />
      </Form.Item>
      <Form.Item name={[...prefix, 'min_success']} label={t('routing.minSuccess')}>
        <InputNumber min={0} max={1} step={0.01} style={{ width: '100%' }} />
      </Form.Item>
      <Form.Item name={[...prefix, 'max_p95_ms']} label={t('routing.maxP95')}>
        <InputNumber min={0} max={3600000} precision={0} style={{ width: '100%' }} />
      </Form.Item>
      <Form.Item name={[...prefix, 'require']} label={t('routing.require')}>
        <Select
          mode="multiple"
          allowClear
          options={['streaming', 'tools', 'vision'].map((c) => ({ value: c, label: t(`routing.cap_${c}`) }))}
        />
      </Form.Item>
    </>
  );
}
