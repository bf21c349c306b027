import { fireEvent, screen } from '@testing-library/react';
import { useState } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import { renderWithProviders } from '../test/render';
import { StepUpCancelled, useStepUp } from './StepUp';

function Harness({ call }: { call: (code?: string) => Promise<string> }) {
  const stepUp = useStepUp();
  const [result, setResult] = useState('');
  return (
    <>
      <button
        onClick={() =>
          stepUp
            .run(call)
            .then(setResult)
            .catch((err: Error) => setResult(err instanceof StepUpCancelled ? 'cancelled' : `failed: ${err.message}`))
        }
      >
        go
      </button>
      <output data-testid="result">{result}</output>
      {stepUp.modal}
    </>
  );
}

describe('useStepUp', () => {
  it('asks for a code after totp_required, keeps asking after a wrong one, and retries with the header code', async () => {
    const call = vi.fn(async (code?: string) => {
      if (!code) throw new ApiError(403, 'totp_required', 'Enter a code');
      if (code !== '222222') throw new ApiError(403, 'totp_invalid', 'The two-factor code is wrong');
      return 'revealed';
    });
    renderWithProviders(<Harness call={call} />);
    fireEvent.click(screen.getByText('go'));
    const input = await screen.findByLabelText('Code');
    fireEvent.change(input, { target: { value: '111111' } });
    fireEvent.click(screen.getByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('The two-factor code is wrong')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Code'), { target: { value: '222222' } });
    // (The button's loading icon is still animating out, which hides its accessible name: click by text.)
    fireEvent.click(screen.getByText('Confirm'));
    expect(await screen.findByText('revealed')).toBeInTheDocument();
    expect(call.mock.calls.map((c) => c[0])).toEqual([undefined, '111111', '222222']);
  });

  it('passes other errors through without asking, and reports a closed dialog', async () => {
    const failing = vi.fn(async () => {
      throw new ApiError(404, 'token_not_found', 'Key not found');
    });
    const { unmount } = renderWithProviders(<Harness call={failing} />);
    fireEvent.click(screen.getByText('go'));
    expect(await screen.findByText('failed: Key not found')).toBeInTheDocument();
    expect(screen.queryByLabelText('Code')).not.toBeInTheDocument();
    unmount();

    const asking = vi.fn(async () => {
      throw new ApiError(403, 'totp_required', 'Enter a code');
    });
    renderWithProviders(<Harness call={asking} />);
    fireEvent.click(screen.getByText('go'));
    await screen.findByLabelText('Code');
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(await screen.findByText('cancelled')).toBeInTheDocument();
    expect(asking).toHaveBeenCalledTimes(1);
  });
});
