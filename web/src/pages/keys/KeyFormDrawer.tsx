import { Button, Collapse, DatePicker, Drawer, Flex, Form, Input, InputNumber, Select, Switch, App } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useUserGroups } from '../../api/auth';
import { usePricing } from '../../api/pricing';
import { useCreateToken, useUpdateToken } from '../../api/tokens';
import type { Token, TokenInput } from '../../api/types';
import { unitsToUsdText, usdToUnits } from '../../lib/money';
import { useFormat } from '../../lib/useFormat';
import { applyServerError, decimalRules, isIpOrCidr } from '../../lib/validation';
import { WIDE_DRAWER } from '../../components/drawerSize';
import { OrderedSelect } from '../../components/OrderedSelect';
import { PrefsFields, toPrefs, type PrefsValues } from '../routing/PrefsFields';

export interface KeyFormValues {
  name: string;
  unlimited: boolean;
  remain_amount?: string;
  expires_at?: Dayjs | null;
  models?: string[];
  allowed_ips?: string[];
  group?: string;
  /** Groups tried in this order when the key's group has no route left. */
  fallback_groups?: string[];
  rpm?: number | null;
  concurrency?: number | null;
  daily_budget_amount?: string;
  monthly_budget_amount?: string;
  tpm?: number | null;
  /** The key's routing preferences (over its owner's profile). */
  routing?: PrefsValues;
}

/**
 * Form values → API body; money fields are typed in the display currency (`toUnits`, USD by default). A create
 * omits empty optional fields; an update sends them to clear.
 */
export function toTokenInput(values: KeyFormValues, update = false, toUnits: (text: string) => number | null = usdToUnits): TokenInput {
  const body: TokenInput = {
    name: values.name.trim(),
    unlimited: values.unlimited,
    models: values.models ?? [],
    allowed_ips: (values.allowed_ips ?? []).map((ip) => ip.trim()),
    rpm: values.rpm ?? 0,
    concurrency: values.concurrency ?? 0,
    daily_budget: toUnits(values.daily_budget_amount || '0') ?? 0,
    monthly_budget: toUnits(values.monthly_budget_amount || '0') ?? 0,
    tpm: values.tpm ?? 0,
  };
  if (!values.unlimited) body.remain_quota = toUnits(values.remain_amount ?? '0') ?? 0;
  if (values.expires_at) body.expires_at = values.expires_at.toISOString();
  else if (update) body.expires_at = null;
  if (values.group) body.group = values.group;
  else if (update) body.group = '';
  const fallbacks = cleanFallbacks(values.fallback_groups, values.group);
  if (fallbacks.length > 0 || update) body.fallback_groups = fallbacks;
  if (values.routing) {
    const routing = toPrefs(values.routing);
    if (update || Object.keys(routing).length > 0) body.routing = routing;
  }
  return body;
}

/** The most fallback groups a key may list. */
export const MAX_FALLBACK_GROUPS = 5;

/** Fallbacks in the order chosen: no blanks, no repeats, never the key's own group, at most MAX_FALLBACK_GROUPS. */
export function cleanFallbacks(fallbacks: string[] | undefined, group: string | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of fallbacks ?? []) {
    const name = raw.trim();
    if (!name || name === group || seen.has(name)) continue;
    seen.add(name);
    out.push(name);
  }
  return out.slice(0, MAX_FALLBACK_GROUPS);
}

function toFormValues(token: Token, toText: (units: number) => string = unitsToUsdText): KeyFormValues {
  return {
    name: token.name,
    unlimited: token.unlimited,
    remain_amount: token.unlimited ? undefined : toText(token.remain_quota),
    expires_at: token.expires_at ? dayjs(token.expires_at) : null,
    models: token.models ?? [],
    allowed_ips: token.allowed_ips ?? [],
    group: token.group || undefined,
    fallback_groups: token.fallback_groups ?? [],
    rpm: token.rpm || null,
    concurrency: token.concurrency || null,
    daily_budget_amount: token.daily_budget ? toText(token.daily_budget) : undefined,
    monthly_budget_amount: token.monthly_budget ? toText(token.monthly_budget) : undefined,
    tpm: token.tpm || null,
    routing: { ...token.routing },
  };
}

interface KeyFormDrawerProps {
  open: boolean;
  token: Token | null;
  onClose: () => void;
  onCreated: (token: Token) => void;
}

/** Create or edit an sk- key with every field. */
export function KeyFormDrawer({ open, token, onClose, onCreated }: KeyFormDrawerProps) {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { moneyInput } = useFormat();
  const [form] = Form.useForm<KeyFormValues>();
  const unlimited = Form.useWatch('unlimited', form);
  const group = Form.useWatch('group', form);
  const groups = useUserGroups(open);
  const pricing = usePricing(open);
  const create = useCreateToken();
  const update = useUpdateToken();

  useEffect(() => {
    if (!open) return;
    form.resetFields();
    if (token) form.setFieldsValue(toFormValues(token, moneyInput.toText));
    // moneyInput changes identity every render; the display currency it depends on is stable while open.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open, token, form]);

  const onFinish = async (values: KeyFormValues) => {
    try {
      if (token) {
        await update.mutateAsync({ id: token.id, body: toTokenInput(values, true, moneyInput.toUnits) });
        message.success(t('common.saved'));
        onClose();
      } else {
        const created = await create.mutateAsync(toTokenInput(values, false, moneyInput.toUnits));
        onClose();
        onCreated(created);
      }
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  const groupOptions = (groups.data ?? []).map((g) => ({
    value: g.name,
    label: g.display_name && g.display_name !== g.name ? `${g.display_name} (${g.name}) ×${g.ratio}` : `${g.name} ×${g.ratio}`,
  }));

  const ipRule = {
    validator: (_: unknown, value: string[] | undefined) => {
      const bad = (value ?? []).find((ip) => !isIpOrCidr(ip));
      return bad ? Promise.reject(new Error(t('validation.ipList', { value: bad }))) : Promise.resolve();
    },
  };

  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={token ? t('keys.editTitle') : t('keys.createTitle')}
      size={WIDE_DRAWER}
      destroyOnHidden
      extra={
        <Flex gap={8}>
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="primary" onClick={() => form.submit()} loading={create.isPending || update.isPending} data-testid="key-submit">
            {token ? t('common.save') : t('common.create')}
          </Button>
        </Flex>
      }
    >
      <Form<KeyFormValues> form={form} layout="vertical" onFinish={onFinish} initialValues={{ unlimited: true }} name="key-form">
        <Form.Item
          name="name"
          label={t('keys.name')}
          rules={[
            { required: true, whitespace: true, message: t('validation.required') },
            { max: 64, message: t('validation.tooLong', { max: 64 }) },
          ]}
        >
          <Input />
        </Form.Item>
        <Form.Item name="unlimited" label={t('keys.unlimited')} valuePropName="checked" extra={t('keys.unlimitedHint')}>
          <Switch />
        </Form.Item>
        {unlimited === false ? (
          <Form.Item name="remain_amount" label={t('keys.remainQuotaAmount')} rules={decimalRules(t, true)}>
            <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
          </Form.Item>
        ) : null}
        <Form.Item
          name="expires_at"
          label={t('keys.expiresAt')}
          extra={t('keys.neverExpiresHint')}
          rules={[
            {
              validator: (_, value: Dayjs | null | undefined) =>
                !value || value.isAfter(dayjs()) ? Promise.resolve() : Promise.reject(new Error(t('validation.future'))),
            },
          ]}
        >
          <DatePicker showTime style={{ width: '100%' }} />
        </Form.Item>
        <Form.Item name="models" label={t('keys.models')} extra={t('keys.modelsHint')}>
          <Select
            mode="tags"
            tokenSeparators={[',', ' ']}
            options={(pricing.data ?? []).map((p) => ({ value: p.model, label: p.model }))}
          />
        </Form.Item>
        <Form.Item name="allowed_ips" label={t('keys.allowedIps')} extra={t('keys.allowedIpsHint')} rules={[ipRule]}>
          <Select mode="tags" tokenSeparators={[',', ' ']} open={false} suffixIcon={null} />
        </Form.Item>
        <Form.Item name="group" label={t('keys.group')} extra={t('keys.groupHint')}>
          <Select
            allowClear
            loading={groups.isPending}
            data-testid="key-group"
            options={groupOptions}
            onChange={(value: string | undefined) => {
              const fallbacks = form.getFieldValue('fallback_groups') as string[] | undefined;
              if (value && fallbacks?.includes(value)) form.setFieldValue('fallback_groups', fallbacks.filter((g) => g !== value));
            }}
          />
        </Form.Item>
        <Form.Item
          name="fallback_groups"
          label={t('keys.fallbackGroups')}
          extra={t('keys.fallbackGroupsHint', { max: MAX_FALLBACK_GROUPS })}
          rules={[
            {
              validator: (_, value: string[] | undefined) =>
                (value ?? []).length <= MAX_FALLBACK_GROUPS
                  ? Promise.resolve()
                  : Promise.reject(new Error(t('keys.fallbackGroupsMax', { max: MAX_FALLBACK_GROUPS }))),
            },
          ]}
        >
          <OrderedSelect
            maxCount={MAX_FALLBACK_GROUPS}
            loading={groups.isPending}
            data-testid="key-fallback-groups"
            options={groupOptions.filter((o) => o.value !== group)}
          />
        </Form.Item>
        <Flex gap={16} wrap>
          <Form.Item name="rpm" label={t('keys.rpm')} extra={t('keys.zeroUnlimited')} style={{ flex: 1, minWidth: 160 }}>
            <InputNumber min={0} precision={0} style={{ width: '100%' }} />
          </Form.Item>
          <Form.Item name="concurrency" label={t('keys.concurrency')} extra={t('keys.zeroUnlimited')} style={{ flex: 1, minWidth: 160 }}>
            <InputNumber min={0} precision={0} style={{ width: '100%' }} />
          </Form.Item>
          <Form.Item name="tpm" label={t('keys.tpm')} extra={t('keys.zeroUnlimited')} style={{ flex: 1, minWidth: 160 }}>
            <InputNumber min={0} precision={0} style={{ width: '100%' }} />
          </Form.Item>
        </Flex>
        <Flex gap={16} wrap>
          <Form.Item name="daily_budget_amount" label={t('keys.dailyBudget')} extra={t('keys.dailyBudgetHint')} rules={decimalRules(t)} style={{ flex: 1, minWidth: 200 }}>
            <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
          </Form.Item>
          <Form.Item name="monthly_budget_amount" label={t('keys.monthlyBudget')} extra={t('keys.monthlyBudgetHint')} rules={decimalRules(t)} style={{ flex: 1, minWidth: 200 }}>
            <Input prefix={moneyInput.prefix} suffix={moneyInput.suffix} inputMode="decimal" />
          </Form.Item>
        </Flex>
        <Collapse
          ghost
          items={[{ key: 'routing', label: t('routing.prefsTitle'), forceRender: true, children: <PrefsFields prefix={['routing']} /> }]}
        />
      </Form>
    </Drawer>
  );
}
