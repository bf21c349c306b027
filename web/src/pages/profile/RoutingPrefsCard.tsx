import { App, Button, Card, Form, Typography } from 'antd';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useUpdateRoutingPrefs } from '../../api/routing';
import { useSession } from '../../auth/SessionProvider';
import { applyServerError } from '../../lib/validation';
import { PrefsFields, toPrefs, type PrefsValues } from '../routing/PrefsFields';

/** The user's routing preferences (PATCH /api/user/routing): strategy, prefer / avoid, limits. */
export function RoutingPrefsCard() {
  const { t } = useTranslation();
  const { message } = App.useApp();
  const { user } = useSession();
  const update = useUpdateRoutingPrefs();
  const [form] = Form.useForm<PrefsValues>();
  const stored = user?.routing;

  useEffect(() => {
    form.setFieldsValue({ ...stored });
  }, [stored, form]);

  const onFinish = async (v: PrefsValues) => {
    try {
      await update.mutateAsync(toPrefs(v));
      message.success(t('common.saved'));
    } catch (err) {
      const text = applyServerError(form, err);
      if (text) message.error(text);
    }
  };

  return (
    <Card title={t('routing.prefsTitle')}>
      <Typography.Paragraph type="secondary">{t('routing.prefsIntro')}</Typography.Paragraph>
      <Form<PrefsValues> form={form} layout="vertical" onFinish={onFinish} name="routing-prefs">
        <PrefsFields />
        <Button type="primary" htmlType="submit" loading={update.isPending} data-testid="routing-prefs-save">
          {t('common.save')}
        </Button>
      </Form>
    </Card>
  );
}
