import { ArrowDownOutlined, ArrowUpOutlined, DeleteOutlined, HolderOutlined, PlusOutlined } from '@ant-design/icons';
import { Button, Card, Flex, Form, Input, InputNumber, Select, Tag, Tooltip, Typography, theme } from 'antd';
import { useState, type DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { priorityAt, type RouteFormValues } from './groupForm';

interface RouteListProps {
  channelOptions: { value: number; label: string }[];
  channelsLoading?: boolean;
}

const ROUTE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The group's routes as an ordered list inside the surrounding Form (field `routes`): the top route is tried
 * first. Reorder by dragging the handle (HTML5 drag events) or with the up/down buttons, which keyboard users reach.
 */
export function RouteList({ channelOptions, channelsLoading }: RouteListProps) {
  const { t } = useTranslation();
  const { token } = theme.useToken();
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const [dragOver, setDragOver] = useState<number | null>(null);

  return (
    <Form.List name="routes">
      {(fields, { add, remove, move }, { errors }) => {
        const endDrag = () => {
          setDragFrom(null);
          setDragOver(null);
        };
        const onDrop = (e: DragEvent, to: number) => {
          e.preventDefault();
          const from = dragFrom ?? Number(e.dataTransfer.getData('text/plain'));
          if (Number.isInteger(from) && from >= 0 && from < fields.length && from !== to) move(from, to);
          endDrag();
        };
        return (
          <Flex vertical gap={8} data-testid="route-list">
            {fields.map((field, index) => (
              <Card
                key={field.key}
                size="small"
                data-testid="route-row"
                onDragOver={(e) => {
                  if (dragFrom === null) return;
                  e.preventDefault();
                  e.dataTransfer.dropEffect = 'move';
                  if (dragOver !== index) setDragOver(index);
                }}
                onDrop={(e) => onDrop(e, index)}
                style={{
                  borderColor: dragOver === index && dragFrom !== index ? token.colorPrimary : undefined,
                  opacity: dragFrom === index ? 0.5 : 1,
                }}
              >
                <Flex gap={8} align="start" wrap>
                  <Flex vertical align="center" gap={4} style={{ paddingTop: 4 }}>
                    <span
                      draggable
                      role="button"
                      tabIndex={-1}
                      aria-label={t('logicalGroups.dragRoute')}
                      data-testid="route-drag"
                      onDragStart={(e) => {
                        setDragFrom(index);
                        e.dataTransfer.effectAllowed = 'move';
                        e.dataTransfer.setData('text/plain', String(index));
                      }}
                      onDragEnd={endDrag}
                      style={{ cursor: 'grab', color: token.colorTextSecondary, fontSize: 16 }}
                    >
                      <HolderOutlined />
                    </span>
                    <Tooltip title={t('logicalGroups.priorityHint')}>
                      <Tag style={{ marginInlineEnd: 0 }} data-testid="route-priority">
                        {priorityAt(index, fields.length)}
                      </Tag>
                    </Tooltip>
                  </Flex>
                  <Form.Item
                    name={[field.name, 'name']}
                    label={t('logicalGroups.routeName')}
                    style={{ flex: '1 1 140px', marginBottom: 0 }}
                    rules={[
                      { required: true, whitespace: true, message: t('validation.required') },
                      { pattern: ROUTE_NAME, message: t('validation.slug') },
                      ({ getFieldValue }) => ({
                        validator: (_, value: string | undefined) => {
                          const name = value?.trim();
                          const routes = (getFieldValue('routes') ?? []) as (RouteFormValues | undefined)[];
                          const same = routes.filter((r) => r?.name?.trim() === name).length;
                          return !name || same <= 1 ? Promise.resolve() : Promise.reject(new Error(t('logicalGroups.routeNameTaken')));
                        },
                      }),
                    ]}
                  >
                    <Input data-testid="route-name" />
                  </Form.Item>
                  <Form.Item
                    name={[field.name, 'weight']}
                    label={t('logicalGroups.routeWeight')}
                    tooltip={t('logicalGroups.routeWeightHint')}
                    style={{ width: 110, marginBottom: 0 }}
                  >
                    <InputNumber min={0} precision={0} style={{ width: '100%' }} />
                  </Form.Item>
                  <Form.Item
                    name={[field.name, 'channels']}
                    label={t('logicalGroups.routeChannels')}
                    style={{ flex: '2 1 220px', marginBottom: 0 }}
                    rules={[{ required: true, type: 'array', min: 1, message: t('logicalGroups.channelsRequired') }]}
                  >
                    <Select
                      mode="multiple"
                      optionFilterProp="label"
                      loading={channelsLoading}
                      options={channelOptions}
                      data-testid="route-channels"
                    />
                  </Form.Item>
                  <Flex gap={0} style={{ paddingTop: 30 }}>
                    <Tooltip title={t('logicalGroups.moveUp')}>
                      <Button
                        type="text"
                        aria-label={t('logicalGroups.moveUp')}
                        icon={<ArrowUpOutlined />}
                        disabled={index === 0}
                        onClick={() => move(index, index - 1)}
                        data-testid="route-up"
                      />
                    </Tooltip>
                    <Tooltip title={t('logicalGroups.moveDown')}>
                      <Button
                        type="text"
                        aria-label={t('logicalGroups.moveDown')}
                        icon={<ArrowDownOutlined />}
                        disabled={index === fields.length - 1}
                        onClick={() => move(index, index + 1)}
                        data-testid="route-down"
                      />
                    </Tooltip>
                    <Tooltip title={t('logicalGroups.removeRoute')}>
                      <Button
                        type="text"
                        danger
                        aria-label={t('logicalGroups.removeRoute')}
                        icon={<DeleteOutlined />}
                        onClick={() => remove(field.name)}
                      />
                    </Tooltip>
                  </Flex>
                </Flex>
              </Card>
            ))}
            <Form.ErrorList errors={errors} />
            {fields.length === 0 ? (
              <Typography.Text type="secondary" data-testid="no-routes">
                {t('logicalGroups.noRoutesHint')}
              </Typography.Text>
            ) : null}
            {fields.length > 1 ? <Typography.Text type="secondary">{t('logicalGroups.routesOrderHint')}</Typography.Text> : null}
            <Button type="dashed" icon={<PlusOutlined />} onClick={() => add({ name: '', weight: 1, channels: [] })} data-testid="add-route">
              {t('logicalGroups.addRoute')}
            </Button>
          </Flex>
        );
      }}
    </Form.List>
  );
}
