import type { FormInstance } from 'antd';
import type { Rule } from 'antd/es/form';
import type { TFunction } from 'i18next';
import { ApiError } from '../api/client';
import { isDecimal } from './money';

export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{3,32}$/;
export const PASSWORD_MIN = 8;

export function usernameRules(t: TFunction): Rule[] {
  return [
    { required: true, whitespace: true, message: t('validation.required') },
    { pattern: USERNAME_PATTERN, message: t('validation.username') },
  ];
}

export function passwordRules(t: TFunction): Rule[] {
  return [
    { required: true, message: t('validation.required') },
    { min: PASSWORD_MIN, message: t('validation.passwordMin', { min: PASSWORD_MIN }) },
    { max: 128, message: t('validation.tooLong', { max: 128 }) },
  ];
}

/** A confirm field that must equal `field`. */
export function confirmRules(t: TFunction, field: string): Rule[] {
  return [
    { required: true, message: t('validation.required') },
    ({ getFieldValue }) => ({
      validator: (_, value) =>
        !value || getFieldValue(field) === value ? Promise.resolve() : Promise.reject(new Error(t('validation.mismatch'))),
    }),
  ];
}

/** A decimal price or ratio ("0.15"); empty allowed unless required. */
export function decimalRules(t: TFunction, required = false): Rule[] {
  return [
    ...(required ? [{ required: true, message: t('validation.required') }] : []),
    {
      validator: (_: unknown, value: unknown) =>
        value === undefined || value === null || value === '' || isDecimal(String(value))
          ? Promise.resolve()
          : Promise.reject(new Error(t('validation.decimal'))),
    },
  ];
}

const IPV4_CIDR = /^(\d{1,3})(\.\d{1,3}){3}(\/\d{1,2})?$/;
const IPV6_CIDR = /^[0-9a-fA-F:]+(\/\d{1,3})?$/;

/** True for an IPv4/IPv6 address or CIDR block. */
export function isIpOrCidr(text: string): boolean {
  const value = text.trim();
  if (IPV4_CIDR.test(value)) {
    const [addr, bits] = value.split('/');
    if (addr.split('.').some((part) => Number(part) > 255)) return false;
    return bits === undefined || Number(bits) <= 32;
  }
  return value.includes(':') && IPV6_CIDR.test(value);
}

/**
 * Shows a failed call on the form: a field the server named gets the message under it; otherwise
 * the message is returned for a toast.
 */
export function applyServerError(form: FormInstance, error: unknown): string | null {
  if (error instanceof ApiError && error.field) {
    // A dotted field ("config.azure.api_version") may be a nested form item; the error goes under the item
    // only when the form took it, else it is shown as a message.
    for (const name of [error.field, error.field.split('.')]) {
      const known = form.getFieldInstance(name) !== undefined || form.getFieldValue(name) !== undefined;
      if (known) {
        form.setFields([{ name, errors: [error.message] }]);
        if (form.getFieldError(name).length > 0) return null;
      }
    }
  }
  return error instanceof Error ? error.message : String(error);
}
