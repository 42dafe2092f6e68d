/** Request examples of the payout routes for the OpenAPI document (disbursement document §2 field tables). */

const LOCAL_MOBILE = {
  payout_reference: 'PAY-2024-0001',
  service_code: 'CS1001',
  recipient_first_name: 'Jane',
  recipient_last_name: 'Doe',
  destination_type: 'MOBILE',
  destination_name: 'MMONEY_KEN',
  recipient_phone_number: '254712345678',
  recipient_account_number: '254712345678',
  recipient_bank_code: '',
  recipient_account_name: 'Jane Doe',
  source_currency: 'KES',
  destination_currency: 'KES',
  exchange_rate: '1',
  sender_amount: '1000.00',
  sender_country_code: 'KEN',
  recipient_amount: '1000.00',
  payment_description: 'Salary March',
  callback_url: 'https://merchant.example.com/callbacks/payouts',
};

export const LOCAL_PAYOUT_EXAMPLES = {
  mobile: { summary: 'To a mobile wallet', value: LOCAL_MOBILE },
  bank: {
    summary: 'To a bank account',
    value: {
      ...LOCAL_MOBILE,
      payout_reference: 'PAY-2024-0002',
      destination_type: 'BANK',
      destination_name: 'BANK_KEN',
      recipient_account_number: '0123456789',
      recipient_bank_code: '01',
    },
  },
};

export const IMT_PAYOUT_EXAMPLES = {
  imt: {
    summary: 'USD float to a Kenyan mobile wallet',
    value: {
      ...LOCAL_MOBILE,
      payout_reference: 'IMT-2024-0001',
      source_currency: 'USD',
      exchange_rate: '129.5',
      sender_amount: '10.00',
      recipient_amount: '1295.00',
      sender_country_code: 'USA',
      sender_first_name: 'John',
      sender_last_name: 'Smith',
      sender_document_type: 'PASSPORT',
      sender_document_number: 'X1234567',
      sender_phone_number: '14155550100',
      sender_type: 'INDIVIDUAL',
      recipient_type: 'INDIVIDUAL',
      recipient_occupation: 'Teacher',
      income_source: 'Salary',
      fund_purpose: 'Family support',
    },
  },
};

export const B2B_PAYOUT_EXAMPLES = {
  paybill: {
    summary: 'To a paybill',
    value: {
      payout_reference: 'B2B-2024-0001',
      service_code: 'CS1001',
      payment_account_reference: 'INV-77',
      recipient_name: 'Acme Supplies',
      recipient_type: 'PAYBILL',
      recipient_account_number: '888880',
      amount: '25000.00',
      payment_description: 'Invoice 77',
      payment_method: 'MMONEY_B2B',
      currency_code: 'KES',
      country_code: 'KEN',
      callback_url: 'https://merchant.example.com/callbacks/payouts',
    },
  },
};
